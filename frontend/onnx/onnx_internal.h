// Pieces of the ONNX frontend shared by its files; not part of its API.
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "frontend/onnx/onnx_importer.h"
#include "ir/dtype.h"
#include "ir/shape.h"
#include "ir/tensor.h"

namespace kiln::frontend::onnx_import {

// --- files (onnx_files.cpp) ------------------------------------------------------------------

// Parses a ModelProto; fails with "PATH: no such file" or "PATH: not an ONNX model (...)".
// Files over limits.max_file_bytes and messages nested deeper than limits.max_proto_depth fail.
std::unique_ptr<onnx::ModelProto> read_model_proto(const std::string& path, const ImportLimits& limits);
// Parses a bare TensorProto; fails with "PATH: not an ONNX tensor (...)".
std::unique_ptr<onnx::TensorProto> read_tensor_proto(const std::string& path, const ImportLimits& limits);
// The canonical directory holding `path`, against which external data is resolved.
std::filesystem::path directory_of(const std::string& path);

// --- tensors (onnx_tensor.cpp) ---------------------------------------------------------------

std::optional<ir::DType> dtype_from_onnx(int code);
// "float", "string", "float8e4m3fn" ... for messages; "code N" for codes ONNX does not define.
std::string onnx_dtype_name(int code);

// Converts TensorProtos to ir::Tensors: typed fields, raw_data (taken over without a copy) and
// external data (memory-mapped, each file once, confined to the base directory).
class TensorLoader {
 public:
  // `file` names the model in messages; `base_dir` is the canonical directory of external data.
  TensorLoader(std::string file, std::filesystem::path base_dir, ImportLimits limits = {});
  // `what` names the tensor in messages ("initializer 'w'"). Moves raw_data out of `proto`.
  ir::Tensor load(onnx::TensorProto& proto, const std::string& what);
  const std::string& file() const { return file_; }

 private:
  std::shared_ptr<const ir::Buffer> external_file(const std::string& location,
                                                  const std::string& what);
  ir::Tensor load_external(const onnx::TensorProto& proto, ir::DType dtype,
                           const std::vector<int64_t>& dims, size_t nbytes, const std::string& what);
  ir::Tensor load_raw(onnx::TensorProto& proto, ir::DType dtype, const std::vector<int64_t>& dims,
                      size_t nbytes, const std::string& what);
  ir::Tensor load_typed(const onnx::TensorProto& proto, ir::DType dtype,
                        const std::vector<int64_t>& dims, int64_t numel, const std::string& what);
  [[noreturn]] void fail_tensor(const std::string& what, const std::string& problem) const;

  std::string file_;
  std::filesystem::path base_dir_;
  ImportLimits limits_;
  std::map<std::string, std::shared_ptr<const ir::Buffer>> mapped_;
};

// --- declared types --------------------------------------------------------------------------

// What a ValueInfo or an initializer declares about a value; either part may be unknown.
struct TypeHint {
  std::optional<ir::DType> dtype;
  std::optional<ir::Shape> shape;
};

// A tensor TypeProto as a hint; `ok` is false for non-tensor types (sequences, maps ...).
TypeHint type_hint(const onnx::TypeProto& type, bool* ok = nullptr);

// The types a graph declares for its values (inputs, outputs, value_info, initializers), with
// those of the enclosing graphs as a fallback. Used where an old opset form needs a type that
// only shape inference would otherwise know.
class TypeHints {
 public:
  TypeHints(const onnx::GraphProto& graph, const TypeHints* parent);
  const TypeHint* find(const std::string& name) const;
  const onnx::TensorProto* initializer(const std::string& name) const;

 private:
  std::map<std::string, TypeHint> hints_;
  std::map<std::string, const onnx::TensorProto*> initializers_;
  const TypeHints* parent_;
};

// "" for the default domain, whichever way the model spells it.
inline std::string normalize_domain(const std::string& d) { return d == "ai.onnx" ? "" : d; }

// The op's name in kiln's registry: the op type, prefixed with "domain:" outside the default
// domain (ai.onnx.preview:FlexAttention).
inline std::string registry_op_name(const onnx::NodeProto& n) {
  const std::string domain = normalize_domain(n.domain());
  return domain.empty() ? n.op_type() : domain + ":" + n.op_type();
}

}  // namespace kiln::frontend::onnx_import
