// TensorProto -> ir::Tensor, with every size checked against the bytes actually present, and
// the types that ValueInfos declare.
#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <limits>
#include <system_error>

#include "frontend/onnx/onnx_internal.h"
#include "ir/error.h"

namespace kiln::frontend::onnx_import {
namespace fs = std::filesystem;

static_assert(std::endian::native == std::endian::little,
              "ONNX raw_data is little-endian; a big-endian host needs byte swapping here");

std::optional<ir::DType> dtype_from_onnx(int code) {
  // ONNX codes of the dtypes kiln has are kiln's own codes (ir/dtype.h).
  return ir::dtype_from_code(code);
}

std::string onnx_dtype_name(int code) {
  static const char* const kNames[] = {
      "undefined", "float",  "uint8",  "int8",   "uint16",       "int16",
      "int32",     "int64",  "string", "bool",   "float16",      "double",
      "uint32",    "uint64", "complex64", "complex128", "bfloat16", "float8e4m3fn",
      "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "uint4", "int4", "float4e2m1",
      "float8e8m0", "uint2", "int2"};
  if (code >= 0 && code < static_cast<int>(std::size(kNames))) return kNames[code];
  return fmt::format("code {}", code);
}

namespace {

// raw_data taken over from the proto, so weights are not copied.
class StringBuffer final : public ir::Buffer {
 public:
  explicit StringBuffer(std::string bytes) : bytes_(std::move(bytes)) {}
  const uint8_t* data() const override { return reinterpret_cast<const uint8_t*>(bytes_.data()); }
  size_t size() const override { return bytes_.size(); }

 private:
  std::string bytes_;
};

std::string dims_text(const google::protobuf::RepeatedField<int64_t>& dims) {
  return fmt::format("[{}]", fmt::join(dims, ","));  // as given, negative dims included
}

// A tensor with its own, aligned copy of `bytes` (bools normalized to 0 or 1).
ir::Tensor copy_of(ir::DType dtype, const std::vector<int64_t>& dims, const uint8_t* bytes) {
  ir::Tensor t(dtype, dims);
  auto* out = static_cast<uint8_t*>(t.mutable_raw());
  if (dtype == ir::DType::Bool) {
    for (size_t i = 0; i < t.nbytes(); ++i) out[i] = bytes[i] != 0;
  } else if (t.nbytes() > 0) {
    std::memcpy(out, bytes, t.nbytes());
  }
  return t;
}

// A view of buffer bytes when they can be used in place, else a copy.
ir::Tensor view_or_copy(ir::DType dtype, const std::vector<int64_t>& dims,
                        std::shared_ptr<const ir::Buffer> buffer, size_t offset, size_t nbytes) {
  const uint8_t* p = buffer->data() + offset;
  bool aligned = reinterpret_cast<uintptr_t>(p) % ir::dtype_size(dtype) == 0;
  bool clean = true;
  if (dtype == ir::DType::Bool)
    for (size_t i = 0; i < nbytes && clean; ++i) clean = p[i] <= 1;
  if (aligned && clean) return ir::Tensor::view(dtype, dims, std::move(buffer), offset);
  return copy_of(dtype, dims, p);
}

// Elements per byte in ONNX's files: int4, uint4 and float4e2m1 pack two, int2 and uint2
// four, the first element in the low bits; kiln keeps one per byte.
int elements_per_byte(ir::DType dtype) {
  if (dtype == ir::DType::I4 || dtype == ir::DType::U4 || dtype == ir::DType::F4E2M1) return 2;
  if (dtype == ir::DType::I2 || dtype == ir::DType::U2) return 4;
  return 1;
}

// One byte per element from ONNX's packed form: the field's bits, sign-extended for the
// signed integers (a float4's bits are kept as they are).
ir::Tensor unpack(ir::DType dtype, const std::vector<int64_t>& dims, const uint8_t* packed) {
  ir::Tensor t(dtype, dims);
  auto* out = static_cast<uint8_t*>(t.mutable_raw());
  const int per = elements_per_byte(dtype), bits = 8 / per;
  const bool is_signed = dtype == ir::DType::I4 || dtype == ir::DType::I2;
  for (int64_t i = 0; i < t.numel(); ++i) {
    unsigned v = (packed[i / per] >> (bits * (i % per))) & ((1u << bits) - 1u);
    if (is_signed && v >= (1u << (bits - 1))) v += 0x100u - (1u << bits);  // sign-extend in the byte
    out[i] = static_cast<uint8_t>(v);
  }
  return t;
}

// The tensor held by `nbytes` bytes of `buffer` at `offset`, in ONNX's stored form.
ir::Tensor from_stored(ir::DType dtype, const std::vector<int64_t>& dims,
                       std::shared_ptr<const ir::Buffer> buffer, size_t offset, size_t nbytes) {
  if (elements_per_byte(dtype) > 1) return unpack(dtype, dims, buffer->data() + offset);
  return view_or_copy(dtype, dims, std::move(buffer), offset, nbytes);
}

std::optional<uint64_t> parse_decimal(const std::string& s) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// True if `path` lies strictly inside `dir` (both canonical or both lexically normal).
bool is_inside(const fs::path& path, const fs::path& dir) {
  auto [d, p] = std::mismatch(dir.begin(), dir.end(), path.begin(), path.end());
  return d == dir.end() && p != path.end();
}

}  // namespace

TensorLoader::TensorLoader(std::string file, fs::path base_dir, ImportLimits limits)
    : file_(std::move(file)), base_dir_(std::move(base_dir)), limits_(limits) {}

void TensorLoader::fail_tensor(const std::string& what, const std::string& problem) const {
  fail("{}: {}: {}", file_, what, problem);
}

ir::Tensor TensorLoader::load(onnx::TensorProto& proto, const std::string& what) {
  std::optional<ir::DType> dtype = dtype_from_onnx(proto.data_type());
  if (!dtype)
    fail_tensor(what, fmt::format("unsupported data type {}", onnx_dtype_name(proto.data_type())));
  if (proto.has_segment()) fail_tensor(what, "segmented tensors are not supported");
  const size_t elem = ir::dtype_size(*dtype);
  if (proto.dims_size() > limits_.max_rank)
    fail_tensor(what, fmt::format("rank {} is over the rank limit of {} (--max-rank)",
                                  proto.dims_size(), limits_.max_rank));
  std::vector<int64_t> dims(proto.dims().begin(), proto.dims().end());
  for (int64_t d : dims)
    if (d < 0)
      fail_tensor(what, fmt::format("negative dimension {} in shape {}", d, dims_text(proto.dims())));
  // The element count saturates instead of wrapping: a zero dim anywhere makes it 0.
  uint64_t count = 1;
  for (int64_t d : dims)
    if (count != 0 && count != UINT64_MAX && __builtin_mul_overflow(count, static_cast<uint64_t>(d), &count))
      count = UINT64_MAX;
  if (std::find(dims.begin(), dims.end(), 0) != dims.end()) count = 0;
  if (count > limits_.max_elements)
    fail_tensor(what, fmt::format("shape {} has more than {} elements, the element limit "
                                  "(--max-elements)",
                                  dims_text(proto.dims()), limits_.max_elements));
  if (count > limits_.max_tensor_bytes / elem)
    fail_tensor(what, fmt::format("shape {} needs {} bytes, over the tensor size limit of {} bytes "
                                  "(--max-tensor-bytes)",
                                  dims_text(proto.dims()), count * elem, limits_.max_tensor_bytes));
  if (count > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / 16 / elem)
    fail_tensor(what, fmt::format("shape {} is too large", dims_text(proto.dims())));
  const int64_t numel = static_cast<int64_t>(count);
  const int per_byte = elements_per_byte(*dtype);  // stored packed when > 1
  const size_t nbytes = per_byte > 1 ? static_cast<size_t>((numel + per_byte - 1) / per_byte)
                                     : static_cast<size_t>(numel) * elem;
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    if (proto.has_raw_data()) fail_tensor(what, "has both external data and raw_data");
    return load_external(proto, *dtype, dims, nbytes, what);
  }
  if (proto.has_raw_data()) return load_raw(proto, *dtype, dims, nbytes, what);
  return load_typed(proto, *dtype, dims, numel, what);
}

ir::Tensor TensorLoader::load_raw(onnx::TensorProto& proto, ir::DType dtype,
                                  const std::vector<int64_t>& dims, size_t nbytes,
                                  const std::string& what) {
  if (proto.raw_data().size() != nbytes)
    fail_tensor(what, fmt::format("raw_data has {} bytes, expected {} ({} elements of {})",
                                  proto.raw_data().size(), nbytes, ir::numel(dims),
                                  ir::dtype_name(dtype)));
  auto buffer = std::make_shared<StringBuffer>(std::move(*proto.mutable_raw_data()));
  proto.clear_raw_data();
  return from_stored(dtype, dims, std::move(buffer), 0, nbytes);
}

ir::Tensor TensorLoader::load_typed(const onnx::TensorProto& proto, ir::DType dtype,
                                    const std::vector<int64_t>& dims, int64_t numel,
                                    const std::string& what) {
  using ir::DType;
  auto check_count = [&](int count, const char* field) {
    if (count != numel)
      fail_tensor(what, count == 0 ? fmt::format("has no data (expected {} values in {} or raw_data)",
                                                 numel, field)
                                   : fmt::format("has {} values in {}, expected {}", count, field,
                                                 numel));
  };
  ir::Tensor t(dtype, dims);
  void* out = t.mutable_raw();
  switch (dtype) {
    case DType::F32:
      check_count(proto.float_data_size(), "float_data");
      if (numel) std::memcpy(out, proto.float_data().data(), t.nbytes());
      return t;
    case DType::F64:
      check_count(proto.double_data_size(), "double_data");
      if (numel) std::memcpy(out, proto.double_data().data(), t.nbytes());
      return t;
    case DType::I64:
      check_count(proto.int64_data_size(), "int64_data");
      if (numel) std::memcpy(out, proto.int64_data().data(), t.nbytes());
      return t;
    case DType::I32:
      check_count(proto.int32_data_size(), "int32_data");
      if (numel) std::memcpy(out, proto.int32_data().data(), t.nbytes());
      return t;
    case DType::U64:
      check_count(proto.uint64_data_size(), "uint64_data");
      if (numel) std::memcpy(out, proto.uint64_data().data(), t.nbytes());
      return t;
    case DType::U32:
      check_count(proto.uint64_data_size(), "uint64_data");
      for (int64_t i = 0; i < numel; ++i) {
        uint64_t v = proto.uint64_data(static_cast<int>(i));
        if (v > 0xffffffffu)
          fail_tensor(what, fmt::format("uint64_data value {} at index {} is out of range for u32", v, i));
        static_cast<uint32_t*>(out)[i] = static_cast<uint32_t>(v);
      }
      return t;
    case DType::I4:
    case DType::U4:
    case DType::F4E2M1:
    case DType::I2:
    case DType::U2: {
      // Packed bytes, one per int32.
      const int per = elements_per_byte(dtype);
      const int64_t stored = (numel + per - 1) / per;
      if (proto.int32_data_size() != stored)
        fail_tensor(what, fmt::format("has {} values in int32_data, expected {} (bytes packing {} "
                                      "elements of {})",
                                      proto.int32_data_size(), stored, numel, ir::dtype_name(dtype)));
      std::vector<uint8_t> bytes(static_cast<size_t>(stored));
      for (int64_t i = 0; i < stored; ++i) {
        int32_t v = proto.int32_data(static_cast<int>(i));
        if (v < 0 || v > 255)
          fail_tensor(what, fmt::format("int32_data value {} at index {} is not a byte", v, i));
        bytes[static_cast<size_t>(i)] = static_cast<uint8_t>(v);
      }
      return unpack(dtype, dims, bytes.data());
    }
    case DType::F8E4M3FN:
    case DType::F8E4M3FNUZ:
    case DType::F8E5M2:
    case DType::F8E5M2FNUZ:
    case DType::F8E8M0:
    case DType::I8:
    case DType::U8:
    case DType::I16:
    case DType::U16:
    case DType::Bool:
    case DType::F16:
    case DType::BF16: {
      // One element per int32; 16-bit floats as their bit patterns.
      check_count(proto.int32_data_size(), "int32_data");
      int64_t lo = 0, hi = 0;
      switch (dtype) {
        case DType::I8: lo = -128, hi = 127; break;
        case DType::U8: lo = 0, hi = 255; break;
        case DType::I16: lo = -32768, hi = 32767; break;
        case DType::U16: lo = 0, hi = 65535; break;
        case DType::Bool: lo = 0, hi = 1; break;
        case DType::F8E4M3FN:
        case DType::F8E4M3FNUZ:
        case DType::F8E5M2:
        case DType::F8E5M2FNUZ:
        case DType::F8E8M0: lo = 0, hi = 255; break;  // a bit pattern
        default: lo = -32768, hi = 65535; break;  // a bit pattern, possibly sign-extended
      }
      for (int64_t i = 0; i < numel; ++i) {
        int32_t v = proto.int32_data(static_cast<int>(i));
        if (v < lo || v > hi)
          fail_tensor(what, fmt::format("int32_data value {} at index {} is out of range for {}", v,
                                        i, ir::dtype_name(dtype)));
        if (ir::dtype_size(dtype) == 1) {
          static_cast<uint8_t*>(out)[i] = static_cast<uint8_t>(v);
        } else {
          uint16_t bits = static_cast<uint16_t>(v);
          std::memcpy(static_cast<uint8_t*>(out) + 2 * i, &bits, 2);
        }
      }
      return t;
    }
  }
  fail_tensor(what, fmt::format("unsupported data type {}", ir::dtype_name(dtype)));
}

ir::Tensor TensorLoader::load_external(const onnx::TensorProto& proto, ir::DType dtype,
                                       const std::vector<int64_t>& dims, size_t nbytes,
                                       const std::string& what) {
  std::string location;
  std::optional<uint64_t> offset, length;
  for (const auto& entry : proto.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset" || entry.key() == "length") {
      std::optional<uint64_t> v = parse_decimal(entry.value());
      if (!v)
        fail_tensor(what, fmt::format("external data {} '{}' is not a non-negative integer",
                                      entry.key(), entry.value()));
      (entry.key() == "offset" ? offset : length) = v;
    }  // "checksum" and keys from newer ONNX versions are not needed to read the data
  }
  std::shared_ptr<const ir::Buffer> file = external_file(location, what);
  const uint64_t size = file->size();
  const uint64_t off = offset.value_or(0);
  if (off > size)
    fail_tensor(what, fmt::format("external data offset {} is beyond the end of '{}' ({} bytes)",
                                  off, location, size));
  const uint64_t len = length.value_or(size - off);
  if (len > size - off)
    fail_tensor(what, fmt::format("external data of {} bytes at offset {} is beyond the end of "
                                  "'{}' ({} bytes)",
                                  len, off, location, size));
  if (len != nbytes)
    fail_tensor(what, fmt::format("external data has {} bytes, expected {} ({} elements of {})", len,
                                  nbytes, ir::numel(dims), ir::dtype_name(dtype)));
  return from_stored(dtype, dims, std::move(file), static_cast<size_t>(off), nbytes);
}

std::shared_ptr<const ir::Buffer> TensorLoader::external_file(const std::string& location,
                                                              const std::string& what) {
  if (location.empty()) fail_tensor(what, "external data has no location");
  fs::path rel(location);
  if (rel.is_absolute() || rel.has_root_name())
    fail_tensor(what, fmt::format("external data location '{}' is an absolute path; it must be "
                                  "relative to the model's directory",
                                  location));
  fs::path joined = (base_dir_ / rel).lexically_normal();
  if (!is_inside(joined, base_dir_))
    fail_tensor(what,
                fmt::format("external data location '{}' leaves the model's directory", location));
  std::error_code ec;
  fs::path full = fs::canonical(joined, ec);
  if (ec) fail_tensor(what, fmt::format("external data file '{}' not found", joined.string()));
  // A symlink may point anywhere; what counts is where the file really is.
  if (!is_inside(full, base_dir_))
    fail_tensor(what, fmt::format("external data location '{}' resolves to '{}', outside the "
                                  "model's directory",
                                  location, full.string()));
  auto it = mapped_.find(full.string());
  if (it != mapped_.end()) return it->second;
  if (!fs::is_regular_file(full, ec))
    fail_tensor(what, fmt::format("external data location '{}' is not a regular file", location));
  std::shared_ptr<const ir::Buffer> buffer = ir::map_file(full.string());
  mapped_.emplace(full.string(), buffer);
  return buffer;
}

TypeHint type_hint(const onnx::TypeProto& type, bool* ok) {
  if (ok) *ok = type.has_tensor_type();
  TypeHint hint;
  if (!type.has_tensor_type()) return hint;
  const auto& tt = type.tensor_type();
  if (tt.has_elem_type()) hint.dtype = dtype_from_onnx(tt.elem_type());
  if (tt.has_shape()) {
    std::vector<ir::Dim> dims;
    for (const auto& d : tt.shape().dim()) {
      if (d.has_dim_value() && d.dim_value() >= 0)
        dims.emplace_back(d.dim_value());
      else if (d.has_dim_param() && !d.dim_param().empty())
        dims.push_back(ir::Dim::symbol(d.dim_param()));
      else
        dims.push_back(ir::Dim::unknown());
    }
    hint.shape = ir::Shape(std::move(dims));
  }
  return hint;
}

TypeHints::TypeHints(const onnx::GraphProto& graph, const TypeHints* parent) : parent_(parent) {
  for (const auto* list : {&graph.value_info(), &graph.output(), &graph.input()})
    for (const auto& vi : *list)
      if (vi.has_type()) hints_[vi.name()] = type_hint(vi.type());
  for (const auto& init : graph.initializer()) {
    TypeHint h;
    h.dtype = dtype_from_onnx(init.data_type());
    bool valid = true;
    for (int64_t d : init.dims()) valid = valid && d >= 0;
    if (valid) h.shape = ir::Shape::of(std::vector<int64_t>(init.dims().begin(), init.dims().end()));
    hints_[init.name()] = h;
    initializers_[init.name()] = &init;
  }
}

const TypeHint* TypeHints::find(const std::string& name) const {
  auto it = hints_.find(name);
  if (it != hints_.end()) return &it->second;
  return parent_ ? parent_->find(name) : nullptr;
}

const onnx::TensorProto* TypeHints::initializer(const std::string& name) const {
  auto it = initializers_.find(name);
  if (it != initializers_.end()) return it->second;
  return parent_ ? parent_->initializer(name) : nullptr;
}

}  // namespace kiln::frontend::onnx_import
