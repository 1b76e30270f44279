// Reading ModelProto and TensorProto files: memory-mapped, parsed with protobuf's size limit
// raised to 2 GB, and checked enough that a file of another kind gives one clear message.
#include <google/protobuf/io/coded_stream.h>

#include <cctype>
#include <climits>
#include <system_error>

#include "frontend/onnx/onnx_internal.h"
#include "ir/error.h"

namespace kiln::frontend::onnx_import {
namespace fs = std::filesystem;
namespace {

// Maps the file, failing with "PATH: no such file" and the like.
std::shared_ptr<const ir::Buffer> map_input(const std::string& path) {
  std::error_code ec;
  fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) fail("{}: no such file", path);
  if (fs::is_directory(st)) fail("{}: is a directory, expected a file", path);
  return ir::map_file(path);
}

// A guess at why bytes did not parse, for the message.
std::string parse_failure(const ir::Buffer& bytes) {
  size_t n = std::min<size_t>(bytes.size(), 256);
  bool text = n > 0;
  for (size_t i = 0; i < n && text; ++i) {
    unsigned char c = bytes.data()[i];
    text = std::isprint(c) || std::isspace(c);
  }
  if (text) return "a text file, expected binary protobuf";
  return "invalid or truncated protobuf data";
}

// Parses `bytes` as `message`; returns false if they are not a complete message.
bool parse(const ir::Buffer& bytes, google::protobuf::MessageLite& message) {
  google::protobuf::io::CodedInputStream in(bytes.data(), static_cast<int>(bytes.size()));
  in.SetTotalBytesLimit(INT_MAX);
  return message.ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
}

void check_size(const std::string& path, const ir::Buffer& bytes, const char* kind) {
  if (bytes.size() == 0) fail("{}: not an ONNX {} (empty file)", path, kind);
  if (bytes.size() > static_cast<size_t>(INT_MAX))
    fail("{}: ONNX {} of {} bytes is over protobuf's 2 GB limit; store the weights as external "
         "data",
         path, kind, bytes.size());
}

}  // namespace

std::unique_ptr<onnx::ModelProto> read_model_proto(const std::string& path) {
  std::shared_ptr<const ir::Buffer> bytes = map_input(path);
  check_size(path, *bytes, "model");
  auto model = std::make_unique<onnx::ModelProto>();
  if (!parse(*bytes, *model)) fail("{}: not an ONNX model ({})", path, parse_failure(*bytes));
  if (!model->has_ir_version()) fail("{}: not an ONNX model (no ir_version)", path);
  if (model->ir_version() <= 0)
    fail("{}: not an ONNX model (invalid ir_version {})", path, model->ir_version());
  if (!model->has_graph()) fail("{}: not an ONNX model (no graph)", path);
  if (model->opset_import_size() == 0 && model->ir_version() >= 3)
    fail("{}: not an ONNX model (no opset_import)", path);
  return model;
}

std::unique_ptr<onnx::TensorProto> read_tensor_proto(const std::string& path) {
  std::shared_ptr<const ir::Buffer> bytes = map_input(path);
  check_size(path, *bytes, "tensor");
  auto tensor = std::make_unique<onnx::TensorProto>();
  if (!parse(*bytes, *tensor)) fail("{}: not an ONNX tensor ({})", path, parse_failure(*bytes));
  if (!tensor->has_data_type() || tensor->data_type() == 0)
    fail("{}: not an ONNX tensor (no data_type)", path);
  return tensor;
}

fs::path directory_of(const std::string& path) {
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  fs::path canonical = fs::canonical(dir, ec);
  if (ec) fail("{}: cannot resolve its directory: {}", path, ec.message());
  return canonical;
}

}  // namespace kiln::frontend::onnx_import
