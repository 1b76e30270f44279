#include "frontend/torchscript/torchscript_importer.h"

#include <fmt/format.h>

#include <cctype>
#include <filesystem>
#include <fstream>

#include "frontend/torchscript/zip_archive.h"
#include "ir/error.h"

namespace kiln::frontend {
namespace fs = std::filesystem;
using namespace torchscript;

namespace {

ZipLimits zip_limits(const ImportLimits& l) {
  ZipLimits z;
  z.max_entry_bytes = l.max_tensor_bytes;
  return z;
}

PickleLimits pickle_limits(const ImportLimits& l) {
  PickleLimits p;
  p.max_tensor_bytes = l.max_tensor_bytes;
  p.max_elements = l.max_elements;
  return p;
}

// Storages of `folder` ("data" or "constants"), each read from its own entry.
StorageLoader storages(const ZipArchive& zip, const std::string& folder) {
  return [&zip, folder](const std::string& key, ir::DType dtype, uint64_t numel) {
    std::string name = folder + "/" + key;
    const ZipEntry* e = zip.find(name);
    if (!e) fail("{}: storage '{}' has no entry '{}'", zip.path(), key, name);
    const uint64_t size = ir::dtype_size(dtype);
    if (size && numel > e->size / size)
      fail("{}: entry '{}' holds {} bytes, fewer than the {} elements of {} its storage declares", zip.path(),
           e->name, e->size, numel, ir::dtype_name(dtype));
    return zip.read_buffer(name);
  };
}

}  // namespace

std::unique_ptr<ir::Graph> import_torchscript(const std::string& path, const TorchScriptImportOptions& options) {
  std::error_code ec;
  if (!fs::exists(path, ec)) fail("{}: no such file", path);
  auto zip = ZipArchive::open(path, zip_limits(options.limits));
  if (!zip->has("data.pkl")) {
    if (zip->has("models/model.json") || zip->has("serialized_exported_program.json"))
      fail("{}: a torch.export program, not a TorchScript archive (give it a .pt2 name)", path);
    fail("{}: no data.pkl: not a TorchScript archive (torch.jit.save)", path);
  }
  if (zip->has("version") || zip->has(".data/version")) {
    std::string v = zip->read(zip->has(".data/version") ? ".data/version" : "version");
    int64_t version = std::atoll(v.c_str());
    if (version < 1 || version > 10)
      fail("{}: archive version {} is not supported (kiln reads versions 1 to 10)", path, v.substr(0, 16));
  }
  if (zip->has("byteorder")) {
    std::string order = zip->read("byteorder");
    if (order.rfind("little", 0) != 0) fail("{}: byte order '{}' is not supported (little-endian only)", path, order.substr(0, 16));
  }
  PickleLimits pl = pickle_limits(options.limits);
  PyRef root = unpickle(zip->read("data.pkl"), path + ": data.pkl", storages(*zip, "data"), pl);
  PyRef constants;
  if (zip->has("constants.pkl"))
    constants = unpickle(zip->read("constants.pkl"), path + ": constants.pkl", storages(*zip, "constants"), pl);
  ProgramLimits limits;
  Program program(*zip, limits);
  auto graph = std::make_unique<ir::Graph>();
  graph->set_name(fs::path(path).stem().string());
  Lowering lowering(program, *graph, limits, pl, path);
  lowering.lower_forward(root, constants, options.inputs);
  graph->remove_unused_values();
  return graph;
}

InputSpec parse_input_shape(const std::string& spec) {
  InputSpec s;
  std::string rest = spec;
  size_t eq = rest.find('=');
  if (eq != std::string::npos) {
    s.name = rest.substr(0, eq);
    rest = rest.substr(eq + 1);
    if (s.name.empty()) fail("--input-shape {}: empty input name", spec);
  }
  // The dtype after the last ':' (a digit there is a range's step: 32..960:32).
  size_t colon = rest.rfind(':');
  if (colon != std::string::npos && colon + 1 < rest.size() &&
      !std::isdigit(static_cast<unsigned char>(rest[colon + 1]))) {
    auto dt = ir::parse_dtype(rest.substr(colon + 1));
    if (!dt) fail("--input-shape {}: unknown dtype '{}' (f32, f16, bf16, f64, i64, i32, i8, u8, bool)", spec,
                  rest.substr(colon + 1));
    s.dtype = *dt;
    rest = rest.substr(0, colon);
  }
  size_t start = 0;
  while (!rest.empty() && start <= rest.size()) {
    size_t comma = rest.find(',', start);
    std::string d = rest.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    auto number = [&](const std::string& text) {
      size_t used = 0;
      int64_t v = -1;
      try {
        v = std::stoll(text, &used);
      } catch (...) {
        used = 0;
      }
      if (text.empty() || used != text.size() || v < 0)
        fail("--input-shape {}: '{}' is not a non-negative integer", spec, text);
      return v;
    };
    if (const size_t dots = d.find(".."); dots != std::string::npos) {  // MIN..MAX[:STEP]: a bounded dim
      const size_t step_at = d.find(':', dots);
      const int64_t lo = number(d.substr(0, dots)),
                    hi = number(d.substr(dots + 2, step_at == std::string::npos ? std::string::npos : step_at - dots - 2));
      if (lo < 1 || hi < lo) fail("--input-shape {}: '{}' must be MIN..MAX with 1 <= MIN <= MAX", spec, d);
      if (step_at != std::string::npos) {
        const int64_t step = number(d.substr(step_at + 1));
        if (step < 1 || lo % step != 0 || hi % step != 0)
          fail("--input-shape {}: '{}': the step must be at least 1 and divide MIN and MAX", spec, d);
        s.steps[s.dims.size()] = step;
      }
      s.ranges[s.dims.size()] = {lo, hi};
      s.dims.push_back(hi);
    } else {
      s.dims.push_back(number(d));
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return s;
}

}  // namespace kiln::frontend
