#include "codegen/cpp/builder.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "codegen/cpp/runtime_files.h"
#include "ir/error.h"

extern char** environ;

namespace kiln::codegen::cpp {

namespace fs = std::filesystem;

namespace {

void write_file(const fs::path& path, std::string_view data) {
  fs::create_directories(path.parent_path());
  std::ofstream f(path, std::ios::binary);
  f.write(data.data(), static_cast<std::streamsize>(data.size()));
  if (!f) fail("{}: cannot write", path.string());
}

std::string read_file(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Absolute when given as a relative path ("./g++"), since compilers run in the sources' folder.
std::string compiler(const BuildOptions& options) {
  const char* env = std::getenv("CXX");
  std::string cxx = !options.cxx.empty() ? options.cxx : env && *env ? env : "c++";
  if (cxx.find('/') != std::string::npos && fs::path(cxx).is_relative()) cxx = fs::absolute(cxx).string();
  return cxx;
}

struct Command {
  std::vector<std::string> argv;
  std::string what;  // for messages: the file being built
  fs::path cwd;      // where it runs (absolute); empty: kiln's working directory
};

// Runs commands, `jobs` at a time; fails with the first failure's compiler output. With
// `what`, tells options.progress "WHAT: K/N units" as they finish.
void run_commands(const std::vector<Command>& commands, const BuildOptions& options, const fs::path& log_dir,
                  const std::string& what = "") {
  const int jobs = std::max(1, options.jobs);
  std::ostream* log = options.log;
  std::map<pid_t, size_t> running;
  size_t next = 0, done = 0;
  auto report = [&] {
    if (options.progress && !what.empty()) options.progress(fmt::format("{}: {}/{} units", what, done, commands.size()));
  };
  report();
  std::string failure;
  auto wait_one = [&] {
    int status = 0;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) fail("waiting for the compiler: {}", std::strerror(errno));
    auto it = running.find(pid);
    if (it == running.end()) return;
    size_t i = it->second;
    running.erase(it);
    ++done;
    report();
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!ok && failure.empty()) {
      std::string out = read_file(log_dir / fmt::format("cmd{}.log", i));
      if (out.size() > 4000) out = out.substr(0, 4000) + "\n...";
      failure = fmt::format("building {} failed: {}\n{}", commands[i].what,
                            fmt::join(commands[i].argv, " "), out);
    }
  };
  while (next < commands.size() || !running.empty()) {
    while (failure.empty() && next < commands.size() && static_cast<int>(running.size()) < jobs) {
      const Command& c = commands[next];
      if (log) fmt::print(*log, "  {}\n", fmt::join(c.argv, " "));
      std::vector<char*> argv;
      for (const std::string& a : c.argv) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      std::string log_path = (log_dir / fmt::format("cmd{}.log", next)).string();
      posix_spawn_file_actions_t actions;
      posix_spawn_file_actions_init(&actions);
      posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      posix_spawn_file_actions_adddup2(&actions, 1, 2);
      posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
      if (!c.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, c.cwd.c_str());
      pid_t pid = 0;
      int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
      posix_spawn_file_actions_destroy(&actions);
      if (rc != 0) {
        while (!running.empty()) wait_one();
        fail("cannot run the C++ compiler '{}': {} (set $CXX)", argv[0], std::strerror(rc));
      }
      running[pid] = next++;
    }
    if (running.empty()) break;
    wait_one();
  }
  if (!failure.empty()) throw Error(failure);
}

// $KILN_EXTRA_CXXFLAGS, split at whitespace: added to every compile and link (e.g. the
// sanitizer build compiles generated code with -fsanitize=address,undefined).
std::vector<std::string> extra_flags() {
  std::vector<std::string> flags;
  const char* env = std::getenv("KILN_EXTRA_CXXFLAGS");
  std::istringstream words(env ? env : "");
  for (std::string w; words >> w;) flags.push_back(w);
  return flags;
}

std::vector<std::string> compile_flags(const BuildOptions& options) {
  // -O3, not -O2: GCC 12's -O2 vectorizes only loops whose trip count needs no remainder
  // (the very-cheap cost model), which leaves the epilogue and depthwise loops scalar;
  // -O3 halved MobileNetV2's latency. -fno-trapping-math (no result changes, only FP exception
  // flags may be raised where the source would not): with trapping math GCC splits a clamp
  // followed by arithmetic (kiln::rt::erf's) into branches it then cannot vectorize, which left
  // BERT's GELU epilogues scalar (5.6% of its time at one thread).
  std::vector<std::string> flags = {"-std=c++17", "-O3", "-fno-trapping-math", "-fPIC", "-pthread", "-fno-plt"};
  if (!options.march.empty()) flags.push_back("-march=" + options.march);
  for (std::string& f : extra_flags()) flags.push_back(std::move(f));
  return flags;
}

// The generated code's own arithmetic (epilogues, fused elementwise loops) is never contracted
// into FMAs, whatever the CPU: GCC contracts C++ by default where the target has FMA (the
// epilogues' AVX2 build, --cpu native), so without it an epilogue gave other bits on an FMA
// CPU than on one without, and than the LLVM backend, which does not contract
// (docs/design/llvm_backend.md). The runtime's kernels keep contraction: their vector code
// relies on it.
constexpr const char* kModelContractFlag = "-ffp-contract=off";

// Written into every object in place of the folder the sources are in (a temporary folder
// beside OUTDIR, named after kiln's process): __FILE__ and, with -g in $KILN_EXTRA_CXXFLAGS,
// the debug info then name "./model.cpp", so the same model gives the same bytes wherever
// it is compiled and whichever compile filled the runtime cache. Not part of the cache key.
// The compilers run in src_dir too, since the debug info also names the working directory.
std::string prefix_map(const fs::path& src_dir) { return "-ffile-prefix-map=" + src_dir.string() + "=."; }

// A 64-bit FNV-1a hash, for cache keys.
uint64_t fnv1a(std::string_view data, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : data) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string compiler_identity(const std::string& cxx, const fs::path& work_dir) {
  // The compiler's own version text, so a compiler upgrade invalidates the cache.
  fs::path tmp = work_dir / "cxx-version.txt";
  std::string cmd = fmt::format("'{}' --version > '{}' 2>&1", cxx, tmp.string());
  int rc = std::system(cmd.c_str());
  std::string text = rc == 0 ? read_file(tmp) : "";
  fs::remove(tmp);
  if (rc != 0) fail("cannot run the C++ compiler '{}' (set $CXX)", cxx);
  return text;
}

// Copies of the runtime's objects that a kiln killed midway left in the cache.
void remove_stale_staging(const fs::path& cache_root) {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(cache_root, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(".staging-", 0) != 0) continue;
    const pid_t pid = static_cast<pid_t>(std::atol(name.c_str() + 9));
    if (pid > 0 && pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH) fs::remove_all(e.path(), ec);
  }
}

// True when `cxx` names a program that exists: a path, or a name found on $PATH.
bool compiler_found(const std::string& cxx) {
  auto runnable = [](const fs::path& p) { return access(p.c_str(), X_OK) == 0 && !fs::is_directory(p); };
  if (cxx.find('/') != std::string::npos) return runnable(cxx);
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && runnable(fs::path(dir) / cxx)) return true;
  return false;
}

// Compiles the runtime into a cache directory (once per runtime, target, compiler and flags) and
// returns its object files. `need_compiler` false (the LLVM backend without a C++ compiler on
// this machine): the folder last built for this runtime, target and flags by any compiler, named
// by the runtime-any-KEY file beside it; fails when there is none.
std::vector<fs::path> runtime_objects(const fs::path& src_dir, const BuildOptions& options,
                                      const fs::path& work_dir, bool need_compiler = true) {
  std::string cxx = compiler(options);
  std::vector<std::string> flags = compile_flags(options);
  uint64_t base = fnv1a(options.triple);
  base = fnv1a(fmt::format("{}", fmt::join(flags, " ")), base);
  std::vector<std::string> sources;
  for (const EmbeddedFile& f : runtime_files()) {
    base = fnv1a(f.path, base);
    base = fnv1a(f.data, base);
    if (f.path.substr(0, 4) == "src/") sources.emplace_back(f.path);
  }
  auto objects_in = [&](const fs::path& dir) {
    std::vector<fs::path> objs;
    for (const std::string& s : sources) objs.push_back(dir / (fs::path(s).stem().string() + ".o"));
    return objs;
  };
  const fs::path any = runtime_cache_dir() / fmt::format("runtime-any-{:016x}", base);
  if (!need_compiler) {
    std::error_code ec;
    const std::string name = fs::exists(any, ec) ? read_file(any) : "";
    const fs::path dir = runtime_cache_dir() / name;
    if (name.empty() || name.find('/') != std::string::npos || !fs::exists(dir / "complete", ec))
      fail("kiln's runtime for {} is not built yet, and building it needs a C++ compiler ('{}' not found; set $CXX)",
           options.triple.empty() ? "this machine" : options.triple, cxx);
    return objects_in(dir);
  }
  const uint64_t key = fnv1a(compiler_identity(cxx, work_dir), base);
  fs::path cache = runtime_cache_dir() / fmt::format("runtime-{:016x}", key);
  // Names `cache` as the runtime for compiler-less builds (written whole, then renamed).
  auto remember = [&](const fs::path& dir) {
    std::error_code ec;
    const fs::path tmp = any.string() + fmt::format(".{}", getpid());
    write_file(tmp, dir.filename().string());
    fs::rename(tmp, any, ec);
    if (ec) fs::remove(tmp, ec);
    return objects_in(dir);
  };
  std::error_code ec;
  if (fs::exists(cache / "complete", ec)) return remember(cache);
  remove_stale_staging(cache.parent_path());

  fs::path build_dir = work_dir / "runtime-objects";
  fs::create_directories(build_dir);
  std::vector<Command> commands;
  for (const std::string& s : sources) {
    Command c{{cxx}, "runtime " + s, src_dir};
    c.argv.insert(c.argv.end(), flags.begin(), flags.end());
    c.argv.insert(c.argv.end(), {prefix_map(src_dir), "-I", (src_dir / "runtime/include").string(), "-c",
                                 (src_dir / "runtime" / s).string(), "-o",
                                 (build_dir / (fs::path(s).stem().string() + ".o")).string()});
    commands.push_back(std::move(c));
  }
  run_commands(commands, options, work_dir, "building kiln's runtime (first use with this compiler and flags)");
  write_file(build_dir / "complete", "");
  // Publish atomically; if another kiln got there first, use its copy.
  fs::create_directories(cache.parent_path(), ec);
  fs::path staging = cache.parent_path() / fmt::format(".staging-{}-{:016x}", getpid(), key);
  fs::copy(build_dir, staging, fs::copy_options::recursive, ec);
  if (!ec) fs::rename(staging, cache, ec);
  if (ec) {
    fs::remove_all(staging, ec);
    if (fs::exists(cache / "complete")) return remember(cache);
    return objects_in(build_dir);
  }
  return remember(cache);
}

// model.cu through nvcc: the host code by the same C++ compiler and flags as the rest, the
// device code as SASS for each architecture plus PTX of the newest (for later GPUs).
Command nvcc_command(const BuildOptions& options, const std::string& cxx, const fs::path& src_dir, const fs::path& work) {
  Command c{{(fs::path(options.cuda_home) / "bin" / "nvcc").string()}, "model.cu", src_dir};
  std::vector<std::string> host = compile_flags(options);
  host.push_back(kModelContractFlag);
  std::string xcompiler;
  for (const std::string& f : host)
    if (f != "-std=c++17" && f != "-O3") xcompiler += (xcompiler.empty() ? "" : ",") + f;
  // -O2 for the host code: a CUDA model's host side is its C API, launches and the few nodes
  // that run on the host, and -O3 cost a fifth more compile time.
  c.argv.insert(c.argv.end(), {"-std=c++17", "-O2", "--expt-relaxed-constexpr", "-diag-suppress=177,186", "-ccbin", cxx,
                               "-Xcompiler", xcompiler});
  for (const std::string& a : options.cuda_archs) c.argv.push_back(fmt::format("-gencode=arch=compute_{0},code=sm_{0}", a));
  if (!options.cuda_archs.empty())
    c.argv.push_back(fmt::format("-gencode=arch=compute_{0},code=compute_{0}", options.cuda_archs.back()));
  c.argv.insert(c.argv.end(), {"-I", src_dir.string(), "-I", (src_dir / "runtime/include").string(), "-c",
                               (src_dir / "model.cu").string(), "-o", (work / "model.o").string()});
  return c;
}

}  // namespace

fs::path runtime_cache_dir() {
  if (const char* d = std::getenv("KILN_CACHE_DIR"); d && *d) return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return fs::path(d) / "kiln";
  if (const char* d = std::getenv("HOME"); d && *d) return fs::path(d) / ".cache" / "kiln";
  return fs::temp_directory_path() / "kiln-cache";
}

void write_sources(const GeneratedModel& model, const fs::path& src_dir) {
  fs::create_directories(src_dir);
  for (const auto& [path, text] : model.files) write_file(src_dir / path, text);
  write_file(src_dir / (model.name + ".weights"), model.weights);
  for (const EmbeddedFile& f : runtime_files()) write_file(src_dir / "runtime" / f.path, f.data);
}

void build(const GeneratedModel& model, const fs::path& src, const fs::path& out, const BuildOptions& options) {
  if (!options.exe && !options.lib && !options.shared && !options.obj) return;
  const fs::path src_dir = fs::absolute(src), out_dir = fs::absolute(out);  // compilers run in src_dir
  fs::path work = out_dir / ".build";
  fs::create_directories(work);
  std::vector<fs::path> rt_objects = runtime_objects(src_dir, options, work);

  std::string cxx = compiler(options);
  std::vector<std::string> flags = compile_flags(options);
  const bool cuda = model.files.count("model.cu") > 0;
  if (cuda && options.cuda_home.empty()) fail("internal: a CUDA model without the CUDA toolkit's folder");
  std::vector<std::string> model_sources = {cuda ? "model.cu" : "model.cpp", "metadata.cpp"};
  if (model.files.count(model.name + "_weights.cpp")) model_sources.push_back(model.name + "_weights.cpp");
  if (options.exe) model_sources.push_back("main.cpp");
  std::vector<Command> commands;
  for (const std::string& s : model_sources) {
    if (s == "model.cu") {
      commands.push_back(nvcc_command(options, cxx, src_dir, work));
      continue;
    }
    Command c{{cxx}, s, src_dir};
    c.argv.insert(c.argv.end(), flags.begin(), flags.end());
    c.argv.push_back(kModelContractFlag);
    c.argv.insert(c.argv.end(), {prefix_map(src_dir), "-I", src_dir.string(), "-I", (src_dir / "runtime/include").string(),
                                 "-Wa,-I," + src_dir.string(), "-c", (src_dir / s).string(), "-o",
                                 (work / (fs::path(s).stem().string() + ".o")).string()});
    commands.push_back(std::move(c));
  }
  run_commands(commands, options, work, "compiling the model");

  std::vector<std::string> objects;
  for (const std::string& s : model_sources)
    if (s != "main.cpp") objects.push_back((work / (fs::path(s).stem().string() + ".o")).string());
  for (const fs::path& o : rt_objects) objects.push_back(o.string());

  std::vector<Command> links;
  if (options.obj) {
    // The model's objects as one relocatable object (the compiler driver runs the target's
    // linker with -r), and the runtime's as their own archive: NAME.o libkiln_rt.a -lstdc++ -lm.
    const fs::path obj = out_dir / (model.name + ".o");
    Command relocatable{{cxx, "-r", "-nostdlib", "-o", obj.string()}, obj.filename().string()};
    for (const std::string& s : model_sources)
      if (s != "main.cpp") relocatable.argv.push_back((work / (fs::path(s).stem().string() + ".o")).string());
    links.push_back(std::move(relocatable));
    Command rt{{options.ar, "rcsD", (out_dir / "libkiln_rt.a").string()}, "libkiln_rt.a"};
    for (const fs::path& o : rt_objects) rt.argv.push_back(o.string());
    links.push_back(std::move(rt));
  }
  fs::path archive = (options.lib ? out_dir : work) / ("lib" + model.name + ".a");
  if (options.lib || options.exe) {
    // D: zero timestamps, owners and modes in the archive (the default of Debian's ar, not of
    // every ar), so that libNAME.a is reproducible.
    Command ar{{options.ar, "rcsD", archive.string()}, archive.filename().string()};
    ar.argv.insert(ar.argv.end(), objects.begin(), objects.end());
    links.push_back(std::move(ar));
  }
  if (options.progress && !links.empty()) options.progress(fmt::format("archiving {}", archive.filename().string()));
  BuildOptions one_at_a_time = options;
  one_at_a_time.jobs = 1;
  run_commands(links, one_at_a_time, work);
  links.clear();
  std::vector<std::string> extra = extra_flags();
  if (cuda) {
    // cuBLAS and the CUDA runtime, found at run time where the toolkit is.
    const std::string lib = (fs::path(options.cuda_home) / "lib64").string();
    extra.insert(extra.end(), {"-L" + lib, "-Wl,-rpath," + lib, "-lcublas", "-lcudart"});
  }
  if (options.exe) {
    Command exe{{cxx, "-pthread", "-o", (out_dir / model.name).string(), (work / "main.o").string(),
                 archive.string()},
                model.name};
    exe.argv.insert(exe.argv.end(), extra.begin(), extra.end());
    links.push_back(std::move(exe));
  }
  if (options.shared) {
    const std::string so_name = "lib" + model.name + ".so";
    Command so{{cxx, "-shared", "-pthread", "-Wl,-soname," + so_name,
                "-Wl,--version-script=" + (src_dir / (model.name + ".map")).string(), "-o", (out_dir / so_name).string()},
               so_name};
    so.argv.insert(so.argv.end(), objects.begin(), objects.end());
    so.argv.insert(so.argv.end(), extra.begin(), extra.end());
    links.push_back(std::move(so));
  }
  if (options.progress && !links.empty()) {
    std::vector<std::string> names;
    for (const Command& c : links) names.push_back(c.what);
    options.progress(fmt::format("linking {}", fmt::join(names, ", ")));
  }
  run_commands(links, options, work);
  fs::remove_all(work);
}

void build_from_object(const std::string& name, const fs::path& model_object, const fs::path& main_object,
                       const fs::path& out, const BuildOptions& options) {
  const fs::path out_dir = fs::absolute(out);
  const fs::path work = out_dir / ".build";
  fs::create_directories(work);
  // The runtime's sources, for the cache's key (and its build on first use).
  const fs::path src_dir = work / "src";
  for (const EmbeddedFile& f : runtime_files()) write_file(src_dir / "runtime" / f.path, f.data);
  const bool have_cxx = compiler_found(compiler(options));
  if (options.exe && !have_cxx)
    fail("linking the executable needs the C++ compiler driver '{}' (set $CXX); --emit obj and lib need none once "
         "kiln's runtime for the target is built",
         compiler(options));
  const std::vector<fs::path> rt_objects = runtime_objects(src_dir, options, work, have_cxx);
  std::vector<Command> links;
  if (options.obj || options.exe) {
    const fs::path rt = (options.obj ? out_dir : work) / "libkiln_rt.a";
    Command ar{{options.ar, "rcsD", rt.string()}, "libkiln_rt.a"};
    for (const fs::path& o : rt_objects) ar.argv.push_back(o.string());
    links.push_back(std::move(ar));
  }
  if (options.lib) {
    Command ar{{options.ar, "rcsD", (out_dir / ("lib" + name + ".a")).string(), model_object.string()},
               "lib" + name + ".a"};
    for (const fs::path& o : rt_objects) ar.argv.push_back(o.string());
    links.push_back(std::move(ar));
  }
  if (options.exe) {
    Command exe{{compiler(options), "-pthread", "-o", (out_dir / name).string(), main_object.string(),
                 model_object.string(), ((options.obj ? out_dir : work) / "libkiln_rt.a").string()},
                name};
    for (std::string& f : extra_flags()) exe.argv.push_back(std::move(f));
    links.push_back(std::move(exe));
  }
  if (options.progress && !links.empty()) options.progress("linking " + name);
  BuildOptions one_at_a_time = options;
  one_at_a_time.jobs = 1;
  run_commands(links, one_at_a_time, work);
  fs::remove_all(work);
}

}  // namespace kiln::codegen::cpp
