#include "frontend/torch_export/pt2_archive.h"

#include <algorithm>
#include <cstring>

#include "frontend/torch_export/pt2_schema.h"
#include "frontend/torchscript/pickle.h"
#include "ir/error.h"

namespace kiln::frontend::torch_export {

namespace ts = kiln::frontend::torchscript;

namespace {

constexpr std::string_view kWeightsDir = "data/weights/";
constexpr std::string_view kConstantsDir = "data/constants/";
constexpr std::string_view kLegacyProgram = "serialized_exported_program.json";

ts::ZipLimits zip_limits(const ImportLimits& limits) {
  ts::ZipLimits z;
  z.max_entry_bytes = std::max(limits.max_file_bytes, limits.max_tensor_bytes);
  return z;
}

ts::PickleLimits pickle_limits(const ImportLimits& limits) {
  ts::PickleLimits p;
  p.max_depth = limits.max_proto_depth;
  p.max_tensor_bytes = limits.max_tensor_bytes;
  p.max_elements = limits.max_elements;
  return p;
}

std::string read_text(const ts::ZipArchive& zip, const std::string& name, const ImportLimits& limits) {
  const ts::ZipEntry* e = zip.find(name);
  if (!e) fail("missing {}", name);
  if (e->size > limits.max_file_bytes)
    fail("{}: {} bytes, over the file size limit of {} (--max-file-bytes)", name, e->size, limits.max_file_bytes);
  return zip.read(name);
}

// The root object of a torch.save blob (a zip holding data.pkl, storages in data/<key>).
ts::PyRef unpickle_torch_save(std::shared_ptr<const ir::Buffer> blob, const std::string& where,
                              const ImportLimits& limits) {
  auto inner = ts::ZipArchive::from_buffer(std::move(blob), where, zip_limits(limits));
  if (!inner->has("data.pkl")) fail("{}: not a torch.save archive (no data.pkl)", where);
  std::string pickle = inner->read("data.pkl");
  const ts::ZipArchive& storages = *inner;
  ts::StorageLoader loader = [&storages, &where](const std::string& key, ir::DType dtype, uint64_t numel) {
    std::string name = key.rfind("data/", 0) == 0 ? key : "data/" + key;
    if (!storages.has(name)) fail("{}: storage '{}' is missing ({})", where, key, name);
    auto bytes = storages.read_buffer(name);
    uint64_t need = 0;
    if (__builtin_mul_overflow(numel, static_cast<uint64_t>(ir::dtype_size(dtype)), &need) || bytes->size() < need)
      fail("{}: storage '{}' holds {} bytes, {} {} elements need {}", where, key, bytes->size(), numel,
           ir::dtype_name(dtype), need);
    return bytes;
  };
  return ts::unpickle(pickle, where + ":data.pkl", loader, pickle_limits(limits));
}

// A torch.save'd dict of tensors (a state dict, the constants). Entries that are not tensors
// (custom objects) are left out: a placeholder that needs one fails then, naming it.
std::map<std::string, ir::Tensor> read_tensor_dict(const ts::ZipArchive& zip, const std::string& name,
                                                   const ImportLimits& limits) {
  std::map<std::string, ir::Tensor> out;
  auto blob = zip.read_buffer(name);
  if (blob->size() == 0) return out;  // serialize_torch_artifact(None)
  ts::PyRef root = unpickle_torch_save(blob, name, limits);
  if (root->kind != ts::PyKind::Dict)
    fail("{}: expected a dict of tensors, found {}", name, ts::py_kind_name(*root));
  for (const auto& [key, value] : root->dict) {
    if (key->kind != ts::PyKind::String) fail("{}: a key of kind {}, expected str", name, ts::py_kind_name(*key));
    if (value->kind == ts::PyKind::Tensor) out[key->s] = value->tensor;
  }
  return out;
}

bool contiguous(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
  int64_t expected = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    if (dims[i] != 1 && strides[i] != expected) return false;
    expected *= dims[i];
  }
  return true;
}

// as_strided(file viewed as a flat array of m.dtype, sizes, strides, storage_offset), checked
// to stay within the file; a view of the file when contiguous, else a copy.
ir::Tensor strided_view(const std::shared_ptr<const ir::Buffer>& file, const TensorMeta& m,
                        const std::string& what, const std::string& file_name) {
  if (!m.shape.is_static()) fail("{}: a weight of symbolic shape {}", what, m.shape.str());
  std::vector<int64_t> dims = m.shape.values();
  const uint64_t elsize = ir::dtype_size(m.dtype);
  if (file->size() % elsize)
    fail("{}: {} holds {} bytes, not a whole number of {} elements", what, file_name, file->size(),
         ir::dtype_name(m.dtype));
  const uint64_t file_elements = file->size() / elsize;
  const int64_t count = ir::numel(dims);
  if (count == 0 || file->size() == 0) return ir::Tensor(m.dtype, dims);  // torch loads an empty record as zeros
  std::vector<int64_t> strides = m.strides;
  if (strides.empty()) {
    strides.resize(dims.size());
    int64_t s = 1;
    for (size_t i = dims.size(); i-- > 0;) {
      strides[i] = s;
      s *= dims[i];
    }
  }
  if (m.storage_offset < 0) fail("{}: negative storage offset {}", what, m.storage_offset);
  uint64_t last = static_cast<uint64_t>(m.storage_offset);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (strides[i] < 0) fail("{}: negative stride {}", what, strides[i]);
    uint64_t step = 0;
    if (__builtin_mul_overflow(static_cast<uint64_t>(dims[i] - 1), static_cast<uint64_t>(strides[i]), &step) ||
        __builtin_add_overflow(last, step, &last))
      last = UINT64_MAX;
  }
  if (last >= file_elements)
    fail("{}: sizes {}, strides {} and storage offset {} reach past the end of {} ({} {} elements, {} bytes)", what,
         ir::dims_str(dims), ir::dims_str(strides), m.storage_offset, file_name, file_elements,
         ir::dtype_name(m.dtype), file->size());
  if (contiguous(dims, strides))
    return ir::Tensor::view(m.dtype, dims, file, static_cast<size_t>(m.storage_offset) * elsize);
  // A view that repeats elements (zero strides) is copied out: not to more than a thousand
  // times its file, so that a few bytes cannot ask for gigabytes.
  const uint64_t bytes = static_cast<uint64_t>(count) * elsize;
  if (bytes > (uint64_t{64} << 20) && bytes / 1000 > file->size())
    fail("{}: sizes {} and strides {} repeat the {} bytes of {} into {} bytes, over a thousandfold", what,
         ir::dims_str(dims), ir::dims_str(strides), file->size(), file_name, bytes);
  ir::Tensor out(m.dtype, dims);
  auto* dst = static_cast<uint8_t*>(out.mutable_raw());
  const uint8_t* src = file->data();
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t n = 0; n < count; ++n) {
    int64_t at = m.storage_offset;
    for (size_t i = 0; i < dims.size(); ++i) at += index[i] * strides[i];
    std::memcpy(dst + n * elsize, src + at * elsize, elsize);
    for (size_t i = dims.size(); i-- > 0;) {
      if (++index[i] < dims[i]) break;
      index[i] = 0;
    }
  }
  return out;
}

bool plain_file_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find_first_of("/\\") == std::string::npos &&
         name.find('\0') == std::string::npos;
}

// A payload config (schema.PayloadConfig): {"config": {fqn: {path_name, is_param, use_pickle,
// tensor_meta}}}, its files under `dir`.
std::map<std::string, ir::Tensor> read_payloads(const ts::ZipArchive& zip, const std::string& config_name,
                                                std::string_view dir, const ImportLimits& limits) {
  std::map<std::string, ir::Tensor> out;
  JsonValue config = parse_json(read_text(zip, config_name, limits), config_name, json_limits(limits));
  const JsonValue& entries = field(config, "config", config_name);
  if (!entries.is_object()) fail("{}: 'config' is not an object", config_name);
  std::map<std::string, std::shared_ptr<const ir::Buffer>> files;
  for (const auto& [fqn, payload] : entries.members()) {
    std::string what = fmt::format("{}: '{}'", config_name, fqn);
    const std::string& path_name = string_of(field(payload, "path_name", what), what + ": path_name");
    if (!plain_file_name(path_name)) fail("{}: path_name '{}' is not a file name", what, path_name);
    std::string entry = std::string(dir) + path_name;
    const JsonValue* pickled = optional_field(payload, "use_pickle", what);
    if (pickled && bool_of(*pickled, what + ": use_pickle")) {
      if (path_name.rfind("custom_obj_", 0) == 0 || path_name.rfind("opaque_obj_", 0) == 0) continue;
      if (!zip.has(entry)) fail("{}: missing {}", what, entry);
      ts::PyRef root = unpickle_torch_save(zip.read_buffer(entry), entry, limits);
      if (root->kind != ts::PyKind::Tensor)
        fail("{}: {} holds {}, expected a tensor", what, entry, ts::py_kind_name(*root));
      out[fqn] = root->tensor;
      continue;
    }
    TensorMeta meta = tensor_meta_of(field(payload, "tensor_meta", what), what + ": tensor_meta", limits);
    auto& file = files[path_name];
    if (!file) {
      if (!zip.has(entry)) fail("{}: missing {}", what, entry);
      file = zip.read_buffer(entry);
    }
    out[fqn] = strided_view(file, meta, what, entry);
  }
  return out;
}

Pt2Contents read_pt2_layout(const ts::ZipArchive& zip, const std::string& model, const ImportLimits& limits) {
  std::string format = read_text(zip, "archive_format", limits);
  if (format != "pt2") fail("archive_format is '{}', expected 'pt2'", format.substr(0, 64));
  if (zip.has("byteorder")) {
    std::string order = read_text(zip, "byteorder", limits);
    if (order != "little") fail("byteorder is '{}': only little-endian archives are supported", order.substr(0, 16));
  }
  Pt2Contents out;
  out.layout = "pt2 archive";
  out.program_entry = "models/" + model + ".json";
  if (!zip.has(out.program_entry)) {
    std::vector<std::string> models;
    for (const ts::ZipEntry& e : zip.entries()) {
      size_t at = e.name.find("models/");
      if (at != std::string::npos && e.name.size() > 5 && e.name.ends_with(".json")) models.push_back(e.name.substr(at));
    }
    fail("missing {} (the archive has {})", out.program_entry,
         models.empty() ? std::string("no models/*.json") : fmt::format("{}", fmt::join(models, ", ")));
  }
  out.program = parse_json(read_text(zip, out.program_entry, limits), out.program_entry, json_limits(limits));

  std::string weights_blob = std::string(kWeightsDir) + model + ".pt";
  std::string weights_config = std::string(kWeightsDir) + model + "_weights_config.json";
  if (zip.has(weights_blob))
    out.state_dict = read_tensor_dict(zip, weights_blob, limits);
  else if (zip.has(weights_config))
    out.state_dict = read_payloads(zip, weights_config, kWeightsDir, limits);
  else
    fail("missing {}", weights_config);

  std::string constants_blob = std::string(kConstantsDir) + model + ".pt";
  std::string constants_config = std::string(kConstantsDir) + model + "_constants_config.json";
  if (zip.has(constants_blob))
    out.constants = read_tensor_dict(zip, constants_blob, limits);
  else if (zip.has(constants_config))
    out.constants = read_payloads(zip, constants_config, kConstantsDir, limits);
  return out;
}

Pt2Contents read_legacy_layout(const ts::ZipArchive& zip, const ImportLimits& limits) {
  Pt2Contents out;
  out.layout = "legacy";
  out.program_entry = std::string(kLegacyProgram);
  out.program = parse_json(read_text(zip, out.program_entry, limits), out.program_entry, json_limits(limits));
  if (zip.has("serialized_state_dict.pt")) out.state_dict = read_tensor_dict(zip, "serialized_state_dict.pt", limits);
  if (zip.has("serialized_constants.pt")) out.constants = read_tensor_dict(zip, "serialized_constants.pt", limits);
  return out;
}

}  // namespace

JsonLimits json_limits(const ImportLimits& limits) {
  JsonLimits j;
  j.max_bytes = limits.max_file_bytes;
  j.max_depth = limits.max_proto_depth;
  return j;
}

Pt2Contents read_pt2_contents(const ts::ZipArchive& zip, const std::string& model, const ImportLimits& limits) {
  if (zip.has("archive_format")) return read_pt2_layout(zip, model, limits);
  if (zip.has(kLegacyProgram)) return read_legacy_layout(zip, limits);
  if (zip.has("data.pkl") || zip.has("constants.pkl"))
    fail("a TorchScript or torch.save archive, not a torch.export program (no archive_format, no {})", kLegacyProgram);
  fail("not a torch.export archive: neither archive_format (torch >= 2.8) nor {} (torch 2.1-2.7)", kLegacyProgram);
}

}  // namespace kiln::frontend::torch_export
