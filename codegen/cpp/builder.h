// Turns a GeneratedModel into files and binaries: writes the source project and runs the
// C++ compiler ($CXX, else c++, or the target's: target.h) to build the executable and libraries.
#pragma once

#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "codegen/cpp/cpp_backend.h"

namespace kiln::codegen::cpp {

struct BuildOptions {
  bool exe = true;
  bool lib = true;
  bool shared = false;
  // NAME.o, one relocatable object of the model's code and weights, and libkiln_rt.a, the
  // target's runtime, for linking with the user's own toolchain.
  bool obj = false;
  std::string cxx;             // empty: $CXX, else "c++"
  std::string ar = "ar";       // the archiver of cxx's target
  std::string triple;          // the target (target.h), part of the runtime cache's key
  // -march for the model and the runtime: "" (the compiler's baseline: a portable binary; the
  // runtime's hot kernels still pick AVX2+FMA at run time where the CPU has them), "native",
  // "x86-64-v2", "x86-64-v3".
  std::string march;
  // CUDA target (model.cu in the sources): the toolkit's folder (nvcc in bin/, cuBLAS in lib64/)
  // and the GPU architectures to build SASS for (compute capabilities: "80", "90"), with PTX of
  // the newest for later GPUs.
  std::string cuda_home;
  std::vector<std::string> cuda_archs;
  int jobs = 2;                // compiler processes at once
  std::ostream* log = nullptr; // commands, with -v
  // Told what is being done, as it changes: "building kiln's runtime (first use ...): 3/38
  // units", "compiling the model: 1/4 units", "linking mlp, libmlp.so".
  std::function<void(const std::string&)> progress;
};

// Writes the generated sources and the runtime into `src_dir` (created).
void write_sources(const GeneratedModel& model, const std::filesystem::path& src_dir);

// Compiles `src_dir` (from write_sources) into `out_dir`: NAME, libNAME.a, libNAME.so, and
// NAME.o with libkiln_rt.a.
// Runtime objects are cached between compilations (see runtime_cache_dir). libNAME.so has
// the SONAME libNAME.so and exports the C API only (NAME.map).
void build(const GeneratedModel& model, const std::filesystem::path& src_dir,
           const std::filesystem::path& out_dir, const BuildOptions& options);

// The outputs of a model already compiled to an object (the LLVM backend: codegen/llvm):
// `model_object` (NAME.o, placed into out_dir when options.obj) with the target's runtime
// (built once and cached, as for the C++ backend) into libkiln_rt.a (obj), libNAME.a (lib)
// and the executable NAME (exe, with `main_object`). No source is compiled when the runtime
// is cached; without any C++ compiler on this machine (options' or $CXX, not found), obj and
// lib take the runtime last built for the target and flags by any compiler, and exe, which the
// compiler driver links, is refused.
void build_from_object(const std::string& name, const std::filesystem::path& model_object,
                       const std::filesystem::path& main_object, const std::filesystem::path& out_dir,
                       const BuildOptions& options);

// $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else $HOME/.cache/kiln.
std::filesystem::path runtime_cache_dir();

}  // namespace kiln::codegen::cpp
