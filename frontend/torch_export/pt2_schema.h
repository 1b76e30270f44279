// Reading torch.export's serialization schema (torch/_export/serde/schema.py, SCHEMA_VERSION
// 8.x) out of parsed JSON: checked field access with a path for messages, unions (one-key
// objects), TensorMeta, symbolic ints, and the schema's enums (ScalarType, Layout,
// MemoryFormat), which number differently from c10's and so from what TorchScript passes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "frontend/onnx/onnx_importer.h"
#include "frontend/torch_export/json.h"
#include "ir/shape.h"
#include "ir/tensor.h"

namespace kiln::frontend::torch_export {

// Checked access; `what` names the place for messages ("node 'conv2d': inputs[1]").
const JsonValue& field(const JsonValue& object, std::string_view key, std::string_view what);
const JsonValue* optional_field(const JsonValue& object, std::string_view key, std::string_view what);
const std::vector<JsonValue>& array_of(const JsonValue& v, std::string_view what);
const std::string& string_of(const JsonValue& v, std::string_view what);
int64_t int_of(const JsonValue& v, std::string_view what);
bool bool_of(const JsonValue& v, std::string_view what);
// A number, or the strings "Infinity", "-Infinity" and "NaN" that the serializer writes for them.
double float_of(const JsonValue& v, std::string_view what);
// A union value: its one key ("as_tensor") and what it holds.
std::pair<std::string_view, const JsonValue&> union_of(const JsonValue& v, std::string_view what);

// A symbolic expression's text as serialized: "s0", "2*s0", or (newer torch) sympy's
// "Symbol('s77', positive=True, integer=True)". The symbol when it is one alone, else nullopt.
std::optional<std::string> single_symbol(std::string_view expr);
// The symbols an expression mentions ("s77", "u0"...), in order of appearance.
std::vector<std::string> expr_symbols(std::string_view expr);

// A SymInt ({as_int} or {as_expr: {expr_str, hint}}) as a dim: a number, a named symbol,
// or unknown for a compound expression.
ir::Dim dim_of(const JsonValue& sym_int, std::string_view what);

struct TensorMeta {
  ir::DType dtype = ir::DType::F32;
  ir::Shape shape;
  std::vector<int64_t> strides;  // empty when any stride is symbolic
  int64_t storage_offset = 0;
};
// Checks rank and (for static shapes) the element and byte limits.
TensorMeta tensor_meta_of(const JsonValue& meta, std::string_view what, const ImportLimits& limits);

// The schema's ScalarType as an IR dtype; fails naming the type for complex and unknown ones.
ir::DType dtype_of_scalar_type(int64_t code, std::string_view what);
// The schema's enums in c10's numbering, which is what aten ops take as ints.
int64_t c10_scalar_type(int64_t code, std::string_view what);
int64_t c10_layout(int64_t code, std::string_view what);
int64_t c10_memory_format(int64_t code, std::string_view what);

}  // namespace kiln::frontend::torch_export
