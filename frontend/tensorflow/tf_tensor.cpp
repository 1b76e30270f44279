// TensorProto and TensorShapeProto into IR tensors and dims.
#include <cstring>
#include <type_traits>

#include <fmt/format.h>

#include "frontend/tensorflow/tf_internal.h"
#include "frontend/tensorflow/tf_types.h"
#include "ir/error.h"

namespace kiln::frontend::tensorflow {

std::optional<std::vector<int64_t>> dims_from_proto(const kiln::tf::TensorShapeProto& shape) {
  if (shape.unknown_rank()) return std::nullopt;
  std::vector<int64_t> dims;
  for (const auto& d : shape.dim()) dims.push_back(d.size() < 0 ? -1 : d.size());
  return dims;
}

namespace {

// Fills `t` from a repeated field: every element, or one value repeated (TF writes a constant
// of one value that way), converted to the tensor's element type.
template <class Field>
void fill_from(ir::Tensor& t, const Field& values, const std::string& where) {
  const int64_t n = t.numel();
  if (values.size() != n && values.size() != 1 && !(values.empty() && n == 0))
    fail("{}: the tensor holds {} values for {} elements", where, values.size(), n);
  if (values.empty()) return;  // zeros
  ir::visit_dtype(t.dtype(), [&]<class T>() {
    if constexpr (std::is_arithmetic_v<T>) {
      T* out = static_cast<T*>(t.mutable_raw());
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(values[values.size() == 1 ? 0 : static_cast<int>(i)]);
    }
  });
}

}  // namespace

ir::Tensor tensor_from_proto(const kiln::tf::TensorProto& proto, const ImportLimits& limits, const std::string& where) {
  const auto dtype = tf_dtype(proto.dtype());
  if (!dtype) fail("{}: tensors of {} are not supported", where, tf_dtype_name(proto.dtype()));
  const auto dims = dims_from_proto(proto.tensor_shape());
  if (!dims) fail("{}: the tensor's shape has an unknown rank", where);
  if (dims->size() > static_cast<size_t>(limits.max_rank))
    fail("{}: the tensor has rank {}, over the rank limit of {} (--max-rank)", where, dims->size(), limits.max_rank);
  uint64_t count = 1;
  for (int64_t d : *dims) {
    if (d < 0) fail("{}: the tensor's shape {} has an unknown dim", where, ir::dims_str(*dims));
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(d), &count) || count > limits.max_elements)
      fail("{}: the tensor of shape {} has more than {} elements, the element limit (--max-elements)", where,
           ir::dims_str(*dims), limits.max_elements);
  }
  const uint64_t bytes = count * ir::dtype_size(*dtype);
  if (bytes > limits.max_tensor_bytes)
    fail("{}: the tensor needs {} bytes, over the tensor size limit of {} (--max-tensor-bytes)", where, bytes,
         limits.max_tensor_bytes);
  ir::Tensor t(*dtype, *dims);
  if (!proto.tensor_content().empty()) {
    if (proto.tensor_content().size() != bytes)
      fail("{}: tensor_content has {} bytes, a {} tensor of shape {} needs {}", where, proto.tensor_content().size(),
           ir::dtype_name(*dtype), ir::dims_str(*dims), bytes);
    if (bytes) std::memcpy(t.mutable_raw(), proto.tensor_content().data(), bytes);
    return t;
  }
  switch (*dtype) {
    case ir::DType::F32: fill_from(t, proto.float_val(), where); break;
    case ir::DType::F64: fill_from(t, proto.double_val(), where); break;
    case ir::DType::I64: fill_from(t, proto.int64_val(), where); break;
    case ir::DType::Bool: fill_from(t, proto.bool_val(), where); break;
    case ir::DType::U32: fill_from(t, proto.uint32_val(), where); break;
    case ir::DType::U64: fill_from(t, proto.uint64_val(), where); break;
    case ir::DType::F16:
    case ir::DType::BF16: {
      // half_val holds the 16-bit patterns.
      const auto& v = proto.half_val();
      if (v.size() != static_cast<int>(count) && v.size() != 1 && !(v.empty() && count == 0))
        fail("{}: the tensor holds {} values for {} elements", where, v.size(), count);
      auto* out = static_cast<uint16_t*>(t.mutable_raw());
      for (uint64_t i = 0; i < count && !v.empty(); ++i) out[i] = static_cast<uint16_t>(v[v.size() == 1 ? 0 : static_cast<int>(i)]);
      break;
    }
    default: fill_from(t, proto.int_val(), where); break;  // int32, int16, int8, uint8, uint16
  }
  return t;
}

}  // namespace kiln::frontend::tensorflow
