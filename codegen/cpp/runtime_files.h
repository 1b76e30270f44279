// The runtime's sources, embedded in kiln at build time (codegen/cpp/embed_files.cmake), so
// kiln can write them into generated projects and compile them with no source tree around.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace kiln::codegen::cpp {

struct EmbeddedFile {
  std::string_view path;  // relative to runtime/: include/kiln/rt/x.h or src/x.cpp
  std::string_view data;
};

const std::vector<EmbeddedFile>& runtime_files();

}  // namespace kiln::codegen::cpp
