// Reading ModelProto and TensorProto files: memory-mapped, parsed with protobuf's size limit
// raised to 2 GB, and checked enough that a file of another kind gives one clear message.
#include <google/protobuf/io/coded_stream.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <system_error>
#include <type_traits>
#include <vector>

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

// Parses `bytes` as `message` with messages nested at most `depth` deep; returns false if they
// are not a complete message.
bool parse(const ir::Buffer& bytes, google::protobuf::MessageLite& message, int depth) {
  google::protobuf::io::CodedInputStream in(bytes.data(), static_cast<int>(bytes.size()));
  in.SetTotalBytesLimit(INT_MAX);
  in.SetRecursionLimit(depth);
  return message.ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
}

// How deep the messages of a ModelProto nest along the path subgraphs take (model.graph,
// graph.node, node.attribute, attribute.g and .graphs), read from the wire format without
// recursion; stops counting past `stop`. Malformed bytes end the walk early.
int model_nesting_depth(const ir::Buffer& bytes, int stop) {
  enum Kind { kModel, kGraph, kNode, kAttribute };
  auto child = [](Kind k, uint64_t field) -> int {
    switch (k) {
      case kModel: return field == 7 ? kGraph : -1;
      case kGraph: return field == 1 ? kNode : -1;
      case kNode: return field == 5 ? kAttribute : -1;
      case kAttribute: return field == 6 || field == 11 ? kGraph : -1;
    }
    return -1;
  };
  const uint8_t* p = bytes.data();
  const uint8_t* end = p + bytes.size();
  std::vector<std::pair<Kind, const uint8_t*>> stack = {{kModel, end}};
  // Reads never pass the end of the message being walked, so p - limit never goes negative.
  auto varint = [&](uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64 && p < stack.back().second; shift += 7) {
      uint8_t b = *p++;
      v |= uint64_t{b & 0x7fu} << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  };
  int deepest = 1;
  while (!stack.empty() && deepest <= stop) {
    if (p >= stack.back().second) {
      p = stack.back().second;
      stack.pop_back();
      continue;
    }
    uint64_t key = 0, v = 0;
    if (!varint(key)) break;
    switch (key & 7) {
      case 0: if (!varint(v)) return deepest; break;
      // Fixed-width fields: check the bytes are there before stepping over them.
      case 1:
        if (stack.back().second - p < 8) return deepest;
        p += 8;
        break;
      case 5:
        if (stack.back().second - p < 4) return deepest;
        p += 4;
        break;
      case 2: {
        if (!varint(v) || v > static_cast<uint64_t>(stack.back().second - p)) return deepest;
        int k = child(stack.back().first, key >> 3);
        if (k < 0) {
          p += v;
        } else {
          stack.push_back({static_cast<Kind>(k), p + v});
          deepest = std::max(deepest, static_cast<int>(stack.size()));
        }
        break;
      }
      default: return deepest;
    }
    if (p > stack.back().second) break;
  }
  return deepest;
}

// Why `bytes` did not parse at `limits.max_proto_depth`.
template <class Message>
std::string parse_failure(const ir::Buffer& bytes, const ImportLimits& limits) {
  if (std::is_same_v<Message, onnx::ModelProto> &&
      model_nesting_depth(bytes, limits.max_proto_depth) > limits.max_proto_depth)
    return fmt::format("messages nested more than {} deep, the protobuf recursion limit "
                       "(--max-proto-depth)",
                       limits.max_proto_depth);
  return parse_failure(bytes);
}

void check_size(const std::string& path, const ir::Buffer& bytes, const char* kind,
                const ImportLimits& limits) {
  if (bytes.size() == 0) fail("{}: not an ONNX {} (empty file)", path, kind);
  if (bytes.size() > limits.max_file_bytes)
    fail("{}: file of {} bytes is over the file size limit of {} bytes (--max-file-bytes)", path,
         bytes.size(), limits.max_file_bytes);
  if (bytes.size() > static_cast<size_t>(INT_MAX))
    fail("{}: ONNX {} of {} bytes is over protobuf's 2 GB limit; store the weights as external "
         "data",
         path, kind, bytes.size());
}

}  // namespace

std::unique_ptr<onnx::ModelProto> read_model_proto(const std::string& path,
                                                   const ImportLimits& limits) {
  std::shared_ptr<const ir::Buffer> bytes = map_input(path);
  check_size(path, *bytes, "model", limits);
  auto model = std::make_unique<onnx::ModelProto>();
  if (!parse(*bytes, *model, limits.max_proto_depth))
    fail("{}: not an ONNX model ({})", path, parse_failure<onnx::ModelProto>(*bytes, limits));
  if (!model->has_ir_version()) fail("{}: not an ONNX model (no ir_version)", path);
  if (model->ir_version() <= 0)
    fail("{}: not an ONNX model (invalid ir_version {})", path, model->ir_version());
  if (!model->has_graph()) fail("{}: not an ONNX model (no graph)", path);
  if (model->opset_import_size() == 0 && model->ir_version() >= 3)
    fail("{}: not an ONNX model (no opset_import)", path);
  return model;
}

std::unique_ptr<onnx::TensorProto> read_tensor_proto(const std::string& path,
                                                     const ImportLimits& limits) {
  std::shared_ptr<const ir::Buffer> bytes = map_input(path);
  check_size(path, *bytes, "tensor", limits);
  auto tensor = std::make_unique<onnx::TensorProto>();
  if (!parse(*bytes, *tensor, limits.max_proto_depth))
    fail("{}: not an ONNX tensor ({})", path, parse_failure<onnx::TensorProto>(*bytes, limits));
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
