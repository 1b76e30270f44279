// Reading TensorFlow's protobuf files with the import limits: the file size, the message
// nesting depth. Errors name the file.
#pragma once

#include <string>

#include <google/protobuf/message.h>

#include "frontend/onnx/onnx_importer.h"

namespace kiln::frontend::tensorflow {

// The bytes of `path`, refused over limits.max_file_bytes.
std::string read_file(const std::string& path, const ImportLimits& limits);
// Parses `bytes` into `message`; `what` ("a SavedModel") names it in errors.
void parse_message(const std::string& bytes, google::protobuf::Message& message, const std::string& path,
                   const std::string& what, const ImportLimits& limits);

}  // namespace kiln::frontend::tensorflow
