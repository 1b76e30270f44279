// The files around the generated model code: the C API header with its C++ wrapper, the
// metadata tables, main() for the executable, the weights embedding, and a CMakeLists.txt
// that rebuilds everything without kiln.
#pragma once

#include <string>

#include "codegen/cpp/cpp_backend.h"

namespace kiln::codegen::cpp {

// `content_hash`: of everything the libraries are built from (generate_cpp), in NAME.h as
// KILN_MODEL_<NAME>_HASH.
std::string api_header(const ir::Graph& graph, const CppOptions& options, const std::string& content_hash);
std::string metadata_source(const ir::Graph& graph, const CppOptions& options);
std::string main_source(const CppOptions& options, bool symbolic_dims);
std::string weights_source(const CppOptions& options);
std::string project_cmake(const CppOptions& options);
// NAME.map: the linker version script that makes libNAME.so export the C API only.
std::string export_map(const CppOptions& options);
// NAME.pc for pkg-config, in the folder of libNAME.a / libNAME.so and NAME.h; `shared`: the
// shared library is there too.
std::string pkg_config_file(const CppOptions& options, bool shared);

}  // namespace kiln::codegen::cpp
