// End-to-end test of one bundled model (models/<name>/): the interpreter, the compiled
// executable (also copied alone elsewhere, and with external weights), and the static and
// shared libraries driven from a C program through NAME.h, each compared with the stored
// reference outputs that ONNX Runtime or PyTorch computed.
//
//   e2e_model_test KILN MODEL_DIR WORK_DIR [--cmake]
//
// With --cmake it also builds OUTDIR/src with CMake, as a machine without kiln would.
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "frontend/onnx/onnx_importer.h"
#include "kiln/rt/npy.h"
#include "kiln/rt/sanitize.h"

namespace fs = std::filesystem;

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  fmt::print("{} {}\n", ok ? "ok  " : "FAIL", what);
  if (!ok) ++failures;
}

int sh(const std::string& cmd) {
  fmt::print("  $ {}\n", cmd);
  std::fflush(stdout);
  int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

std::string capture(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

double element(const kiln::rt::HostTensor& t, int64_t i) {
  const unsigned char* p = t.data.data();
  switch (t.dtype) {
    case KILN_F32: return reinterpret_cast<const float*>(p)[i];
    case KILN_F64: return reinterpret_cast<const double*>(p)[i];
    case KILN_I64: return static_cast<double>(reinterpret_cast<const int64_t*>(p)[i]);
    case KILN_I32: return reinterpret_cast<const int32_t*>(p)[i];
    case KILN_I8: return reinterpret_cast<const int8_t*>(p)[i];
    case KILN_U8: case KILN_BOOL: return p[i];
    default: return NAN;
  }
}

// max |actual - expected| <= 1e-4 * max |expected| (the output's scale).
bool compare(const std::string& expected_path, const std::string& actual_path, const std::string& what) {
  kiln::rt::HostTensor e, a;
  std::string error;
  if (!kiln::rt::read_npy(expected_path, e, error) || !kiln::rt::read_npy(actual_path, a, error)) {
    check(false, fmt::format("{}: {}", what, error));
    return false;
  }
  if (e.dtype != a.dtype || e.shape != a.shape) {
    check(false, fmt::format("{}: dtype/shape {} [{}] vs expected {} [{}]", what, kiln::rt::dtype_name(a.dtype),
                             fmt::join(a.shape, ","), kiln::rt::dtype_name(e.dtype), fmt::join(e.shape, ",")));
    return false;
  }
  double scale = 0, err = 0;
  for (int64_t i = 0; i < e.numel(); ++i) {
    scale = std::max(scale, std::fabs(element(e, i)));
    double d = std::fabs(element(a, i) - element(e, i));
    err = std::isnan(d) ? INFINITY : std::max(err, d);
  }
  double tol = scale > 0 ? 1e-4 * scale : 1e-7;
  bool ok = err <= tol;
  check(ok, fmt::format("{}: max abs error {:.3g} (scale {:.3g}, tolerance {:.3g})", what, err, scale, tol));
  return ok;
}

// The exe's and kiln run's output files are named after the graph outputs.
void compare_named(const std::vector<std::string>& names, const fs::path& model_dir, const fs::path& out_dir,
                   const std::string& what) {
  for (size_t k = 0; k < names.size(); ++k)
    compare((model_dir / fmt::format("expected_{}.npy", k)).string(),
            (out_dir / (kiln::rt::sanitize_file_name(names[k]) + ".npy")).string(),
            fmt::format("{} output {} '{}'", what, k, names[k]));
}

void compare_indexed(size_t n, const fs::path& model_dir, const fs::path& out_dir, const std::string& what) {
  for (size_t k = 0; k < n; ++k)
    compare((model_dir / fmt::format("expected_{}.npy", k)).string(),
            (out_dir / fmt::format("output_{}.npy", k)).string(), fmt::format("{} output {}", what, k));
}

// Only the C and C++ system libraries may be linked dynamically.
void check_ldd(const fs::path& binary) {
  std::string out = capture(fmt::format("ldd '{}' 2>&1", binary.string()));
  std::vector<std::string> extra;
  size_t pos = 0;
  while (pos < out.size()) {
    size_t end = out.find('\n', pos);
    std::string line = out.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    pos = end == std::string::npos ? out.size() : end + 1;
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    bool system = false;
    for (const char* lib : {"linux-vdso", "libc.so", "libm.so", "libstdc++.so", "libgcc_s.so", "ld-linux",
                            "libpthread.so", "libdl.so"})
      system |= line.find(lib) != std::string::npos;
    if (!system) extra.push_back(line);
  }
  check(extra.empty(), fmt::format("ldd {} shows only system libraries{}", binary.filename().string(),
                                   extra.empty() ? "" : ": " + fmt::format("{}", fmt::join(extra, "; "))));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    fmt::print(stderr, "usage: e2e_model_test KILN MODEL_DIR WORK_DIR [--cmake]\n");
    return 2;
  }
  const std::string kiln = fs::absolute(argv[1]).string();
  const fs::path model_dir = fs::absolute(argv[2]);
  const fs::path work = fs::absolute(argv[3]);
  const bool with_cmake = argc > 4 && std::string(argv[4]) == "--cmake";
  const std::string name = "e2e_" + model_dir.filename().string();
  const fs::path model = model_dir / "model.onnx";
  const fs::path source_dir = KILN_E2E_SOURCE_DIR;
  fs::remove_all(work);
  fs::create_directories(work);

  std::vector<std::string> output_names;
  std::unique_ptr<kiln::ir::Graph> graph = kiln::frontend::import_onnx(model.string());
  for (const kiln::ir::Value* v : graph->outputs()) output_names.push_back(v->name());
  std::string inputs;
  for (size_t k = 0; k < graph->inputs().size(); ++k)
    inputs += " '" + (model_dir / fmt::format("input_{}.npy", k)).string() + "'";

  // 1. The reference interpreter.
  check(sh(fmt::format("'{}' run '{}'{} -o '{}'", kiln, model.string(), inputs, (work / "interp").string())) == 0,
        "kiln run");
  compare_named(output_names, model_dir, work / "interp", "interpreter");

  // 2. The compiled executable, in place and copied alone to another directory.
  fs::path out = work / "out";
  const bool compiled = sh(fmt::format("'{}' compile '{}' -o '{}' --name {} --emit exe,lib,shared,source", kiln,
                                       model.string(), out.string(), name)) == 0;
  check(compiled, "kiln compile");
  if (!compiled) {  // nothing below has anything to run
    fmt::print("{}: {} failure(s)\n", model_dir.filename().string(), failures);
    return 1;
  }
  check(sh(fmt::format("'{}' {} -o '{}'", (out / name).string(), inputs, (work / "exe").string())) == 0, "exe runs");
  compare_named(output_names, model_dir, work / "exe", "exe");
  fs::create_directories(work / "alone");
  fs::copy_file(out / name, work / "alone" / name);
  check(sh(fmt::format("cd / && '{}' {} -o '{}' --threads 2 --repeat 3", (work / "alone" / name).string(), inputs,
                       (work / "alone_out").string())) == 0,
        "exe copied alone runs");
  compare_named(output_names, model_dir, work / "alone_out", "exe copied alone");
  check_ldd(work / "alone" / name);

  // 3. The static and shared libraries from C, through NAME.h only.
  std::string cc = std::getenv("CC") ? std::getenv("CC") : "cc";
  std::string c_flags = fmt::format("-std=c99 -Wall -Wextra -Werror -I '{}' -DKILN_MODEL={} '-DKILN_MODEL_HEADER=\"{}.h\"' '{}'",
                                    out.string(), name, name, (source_dir / "run_library.c").string());
  check(sh(fmt::format("{} {} '{}' -lstdc++ -lm -pthread -o '{}'", cc, c_flags, (out / ("lib" + name + ".a")).string(),
                       (work / "run_static").string())) == 0,
        "C program links libNAME.a");
  fs::create_directories(work / "static_out");
  check(sh(fmt::format("'{}' '{}'{}", (work / "run_static").string(), (work / "static_out").string(), inputs)) == 0,
        "C program runs the static library");
  compare_indexed(output_names.size(), model_dir, work / "static_out", "static library");
  check(sh(fmt::format("{} {} -L '{}' -l{} -Wl,-rpath,'{}' -o '{}'", cc, c_flags, out.string(), name, out.string(),
                       (work / "run_shared").string())) == 0,
        "C program links libNAME.so");
  fs::create_directories(work / "shared_out");
  check(sh(fmt::format("'{}' '{}'{}", (work / "run_shared").string(), (work / "shared_out").string(), inputs)) == 0,
        "C program runs the shared library");
  compare_indexed(output_names.size(), model_dir, work / "shared_out", "shared library");
  // NAME.o and the runtime's archive (--emit obj), for the user's own toolchain.
  fs::path obj = work / "obj";
  check(sh(fmt::format("'{}' compile '{}' -o '{}' --name {} --emit obj > '{}/obj.log' 2>&1", kiln, model.string(),
                       obj.string(), name, work.string())) == 0,
        "kiln compile --emit obj");
  c_flags = fmt::format("-std=c99 -Wall -Wextra -Werror -I '{}' -DKILN_MODEL={} '-DKILN_MODEL_HEADER=\"{}.h\"' '{}'",
                        obj.string(), name, name, (source_dir / "run_library.c").string());
  check(sh(fmt::format("{} {} '{}' '{}' -lstdc++ -lm -pthread -o '{}'", cc, c_flags, (obj / (name + ".o")).string(),
                       (obj / "libkiln_rt.a").string(), (work / "run_object").string())) == 0,
        "C program links NAME.o and libkiln_rt.a");
  fs::create_directories(work / "object_out");
  check(sh(fmt::format("'{}' '{}'{}", (work / "run_object").string(), (work / "object_out").string(), inputs)) == 0,
        "C program runs the object");
  compare_indexed(output_names.size(), model_dir, work / "object_out", "object");

  // 4. Weights in a file next to the executable, memory-mapped at run time.
  fs::path ext = work / "external";
  check(sh(fmt::format("'{}' compile '{}' -o '{}' --name {} --emit exe --weights external", kiln, model.string(),
                       ext.string(), name)) == 0,
        "kiln compile --weights external");
  check(fs::exists(ext / (name + ".weights")), "external weights file written");
  fs::rename(ext, work / "external_moved");
  check(sh(fmt::format("cd / && '{}' {} -o '{}'", (work / "external_moved" / name).string(), inputs,
                       (work / "external_out").string())) == 0,
        "exe with external weights runs after moving");
  compare_named(output_names, model_dir, work / "external_out", "external weights");

  // 5. The generated sources alone, built with CMake. Debug (-O0): the check is that the tree
  // builds and runs on its own; at Release the runtime's kernels took 80 s of CI time more.
  if (with_cmake) {
    fs::path build = work / "cmake_build";
    check(sh(fmt::format("cmake -S '{}' -B '{}' -DCMAKE_BUILD_TYPE=Debug > '{}/cmake.log' 2>&1 && cmake --build '{}' -j2 >> '{}/cmake.log' 2>&1",
                         (out / "src").string(), build.string(), work.string(), build.string(), work.string())) == 0,
          "generated CMake project builds");
    check(sh(fmt::format("'{}' {} -o '{}'", (build / name).string(), inputs, (work / "cmake_out").string())) == 0,
          "CMake-built exe runs");
    compare_named(output_names, model_dir, work / "cmake_out", "CMake-built exe");
  }

  if (failures == 0) fs::remove_all(work);
  fmt::print("{}: {} failure(s)\n", model_dir.filename().string(), failures);
  return failures == 0 ? 0 : 1;
}
