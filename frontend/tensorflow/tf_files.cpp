#include "frontend/tensorflow/tf_files.h"

#include <filesystem>
#include <fstream>

#include <google/protobuf/io/coded_stream.h>

#include "ir/error.h"

namespace kiln::frontend::tensorflow {

std::string read_file(const std::string& path, const ImportLimits& limits) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) fail("{}: cannot read ({})", path, ec.message());
  if (size > limits.max_file_bytes)
    fail("{}: {} bytes, over the file size limit of {} (--max-file-bytes)", path, size, limits.max_file_bytes);
  std::ifstream in(path, std::ios::binary);
  std::string bytes(size, '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size))) fail("{}: cannot read", path);
  return bytes;
}

void parse_message(const std::string& bytes, google::protobuf::Message& message, const std::string& path,
                   const std::string& what, const ImportLimits& limits) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(bytes.size()));
  in.SetRecursionLimit(limits.max_proto_depth);
  in.SetTotalBytesLimit(static_cast<int>(std::min<size_t>(bytes.size(), INT32_MAX)));
  if (!message.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
    fail("{}: not {} (the protobuf does not parse, or nests deeper than {} (--max-proto-depth))", path, what,
         limits.max_proto_depth);
}

}  // namespace kiln::frontend::tensorflow
