#include "tests/conformance/compiled.h"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "codegen/cpp/runtime_files.h"
#include "frontend/onnx/onnx_importer.h"
#include "ir/error.h"
#include "tests/conformance/compare.h"
#include "tests/conformance/processes.h"

namespace kiln::conformance {

namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void write_file(const fs::path& p, std::string_view text) {
  fs::create_directories(p.parent_path());
  std::ofstream f(p, std::ios::binary);
  f.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!f) fail("{}: cannot write", p.string());
}

uint64_t fnv1a(std::string_view data, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : data) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Runs a program and waits for it (inside a job's child, whose log takes its output).
int run_sync(const std::vector<std::string>& args) {
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) return 127;
  if (pid == 0) {
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "cannot run %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return 127;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string compiler_version(const std::string& cxx) {
  std::string out;
  if (FILE* p = popen(("'" + cxx + "' --version 2>&1").c_str(), "r")) {
    char buf[256];
    while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    if (pclose(p) != 0) out.clear();
  }
  if (out.empty()) fail("cannot run the C++ compiler '{}'", cxx);
  return out;
}

const std::vector<std::string> kRuntimeFlags = {"-std=c++17", "-O2", "-pthread", "-w"};

// The runtime's embedded sources written out and compiled once per content, compiler and
// flags, cached in settings.cache_dir. Returns the include folder and the objects.
std::pair<fs::path, std::vector<std::string>> runtime_objects(const CompileSettings& s, std::ostream& log) {
  fs::path src = fs::path(s.work_dir) / "runtime";
  uint64_t key = fnv1a(compiler_version(s.cxx));
  key = fnv1a(fmt::format("{}", fmt::join(kRuntimeFlags, " ")), key);
  std::vector<std::string> sources;
  for (const codegen::cpp::EmbeddedFile& f : codegen::cpp::runtime_files()) {
    write_file(src / f.path, f.data);
    key = fnv1a(f.path, fnv1a(f.data, key));
    if (f.path.substr(0, 4) == "src/") sources.emplace_back(f.path);
  }
  fs::path cache = fs::path(s.cache_dir) / fmt::format("runtime-{:016x}", key);
  std::vector<std::string> objects;
  for (const std::string& f : sources) objects.push_back((cache / (fs::path(f).stem().string() + ".o")).string());
  if (fs::exists(cache / "complete")) return {src / "include", objects};

  fmt::print(log, "compiling the runtime ({} files)\n", sources.size());
  // Per process: conformance and conformance.harness may share the cache (KILN_CACHE_DIR) and run
  // at once; the first to finish publishes its objects, the other uses them.
  fs::path partial = fmt::format("{}.partial-{}", cache.string(), static_cast<long>(getpid()));
  fs::remove_all(partial);
  fs::create_directories(partial);
  std::deque<Job> jobs;
  std::string failure;
  for (const std::string& f : sources) {
    Job j;
    j.argv = {s.cxx};
    j.argv.insert(j.argv.end(), kRuntimeFlags.begin(), kRuntimeFlags.end());
    j.argv.insert(j.argv.end(), {"-I", (src / "include").string(), "-c", (src / f).string(), "-o",
                                 (partial / (fs::path(f).stem().string() + ".o")).string()});
    j.log_path = (partial / (fs::path(f).stem().string() + ".log")).string();
    j.timeout_s = s.compile_timeout_s;
    j.done = [&failure, f, log_path = j.log_path, t = j.timeout_s](const JobStatus& st) {
      if (!st.ok() && failure.empty())
        failure = fmt::format("runtime {}: {}\n{}", f, st.describe(t), read_file(log_path).substr(0, 4000));
    };
    jobs.push_back(std::move(j));
  }
  run_jobs(jobs, s.jobs);
  if (!failure.empty()) fail("the runtime does not compile: {}", failure);
  write_file(partial / "complete", "");
  // rename() does not replace a folder with contents: a published cache stays as it is.
  std::error_code ec, ignored;
  fs::rename(partial, cache, ec);
  if (ec && !fs::exists(cache / "complete")) {  // an incomplete leftover of a killed run
    fs::remove_all(cache, ignored);
    fs::rename(partial, cache, ignored);
  }
  fs::remove_all(partial, ignored);  // not published: another process was first
  if (!fs::exists(cache / "complete")) fail("the runtime's objects could not be published in {}", cache.string());
  return {src / "include", objects};
}

// The table every batch's driver reads: one entry per model, the C API behind plain pointers.
constexpr const char* kModelApi = R"cpp(
struct KilnConformanceModel {
  const char* name;
  void* (*create)();
  int (*run)(void*, const void* const*, void* const*);
  const char* (*error)(void*);
  void (*destroy)(void*);
  size_t (*num_inputs)();
  size_t (*num_outputs)();
  const char* (*output_name)(size_t);
  int (*input_dtype)(size_t);
  int (*input_rank)(size_t);
  const int64_t* (*input_dims)(size_t);
  int (*output_dtype)(size_t);
  int (*output_rank)(size_t);
  const int64_t* (*output_dims)(size_t);
  const int64_t* (*output_shape)(void*, size_t);  // after a run: the extents it produced
};
)cpp";

// One model's entry, in namespace kc_N where its C API is visible unqualified.
std::string adapter(const std::string& n) {
  return fmt::format(R"cpp(namespace kc_{0} {{
void* kc_create() {{
  {0}_options o = {{}};
  o.threads = 1;
  return {0}_create(&o);
}}
int kc_run(void* c, const void* const* i, void* const* o) {{ return {0}_run(static_cast<{0}_context*>(c), i, o); }}
const char* kc_error(void* c) {{ return {0}_error(static_cast<{0}_context*>(c)); }}
void kc_destroy(void* c) {{ {0}_destroy(static_cast<{0}_context*>(c)); }}
const int64_t* kc_output_shape(void* c, size_t i) {{ return {0}_output_shape(static_cast<{0}_context*>(c), i); }}
const KilnConformanceModel kc_model = {{"{0}", kc_create, kc_run, kc_error, kc_destroy, {0}_num_inputs,
    {0}_num_outputs, {0}_output_name, {0}_input_dtype, {0}_input_rank, {0}_input_dims, {0}_output_dtype,
    {0}_output_rank, {0}_output_dims, kc_output_shape}};
}}  // namespace kc_{0}
)cpp",
                     n);
}

// main(): runs one model of the executable on raw input files, writes raw outputs.
std::string driver_main(const std::vector<std::string>& names) {
  std::string table;
  for (const std::string& n : names) table += fmt::format("    &kc_{}::kc_model,\n", n);
  return fmt::format(R"cpp(
namespace {{

const KilnConformanceModel* const kModels[] = {{
{table}}};

size_t tensor_bytes(int dtype, int rank, const int64_t* dims) {{
  size_t n = kiln::rt::dtype_size(static_cast<kiln_dtype>(dtype));
  for (int d = 0; d < rank; ++d) n *= static_cast<size_t>(dims[d]);
  return n;
}}

void* buffer(size_t bytes) {{
  void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
  if (p) std::memset(p, 0xff, (bytes + 63) / 64 * 64 + 64);  // unwritten outputs show as NaN / -1
  return p;
}}

}}  // namespace

// Usage: EXE MODEL OUTDIR INPUT_0.bin ... (raw bytes in the model's dtype and shape). Writes
// OUTDIR/output_K.bin and OUTDIR/output_K.meta ("dtype rank dims...", then the name).
int main(int argc, char** argv) {{
  if (argc < 3) {{
    std::fprintf(stderr, "usage: %s MODEL OUTDIR [INPUT.bin ...]\n", argv[0]);
    return 2;
  }}
  const KilnConformanceModel* m = nullptr;
  for (const KilnConformanceModel* c : kModels)
    if (std::strcmp(c->name, argv[1]) == 0) m = c;
  if (!m) {{
    std::fprintf(stderr, "no model %s in this executable\n", argv[1]);
    return 2;
  }}
  const size_t n_in = m->num_inputs(), n_out = m->num_outputs();
  if (static_cast<size_t>(argc - 3) != n_in) {{
    std::fprintf(stderr, "model %s takes %zu inputs, got %d files\n", m->name, n_in, argc - 3);
    return 2;
  }}
  std::vector<void*> in(n_in + 1, nullptr), out(n_out + 1, nullptr);
  for (size_t i = 0; i < n_in; ++i) {{
    size_t bytes = tensor_bytes(m->input_dtype(i), m->input_rank(i), m->input_dims(i));
    in[i] = buffer(bytes);
    FILE* f = std::fopen(argv[3 + i], "rb");
    if (!f || !in[i]) {{
      std::fprintf(stderr, "%s: cannot read\n", argv[3 + i]);
      return 2;
    }}
    size_t got = std::fread(in[i], 1, bytes + 1, f);
    std::fclose(f);
    if (got != bytes) {{
      std::fprintf(stderr, "%s: %zu bytes, input %zu of the compiled model takes %zu\n", argv[3 + i], got, i, bytes);
      return 2;
    }}
  }}
  for (size_t i = 0; i < n_out; ++i) out[i] = buffer(tensor_bytes(m->output_dtype(i), m->output_rank(i), m->output_dims(i)));
  void* ctx = m->create();
  if (!ctx) {{
    std::fprintf(stderr, "out of memory creating the context\n");
    return 3;
  }}
  if (const char* e = m->error(ctx)) {{
    std::fprintf(stderr, "creating the context failed: %s\n", e);
    return 3;
  }}
  if (m->run(ctx, in.data(), out.data()) != 0) {{
    const char* e = m->error(ctx);
    std::fprintf(stderr, "run failed: %s\n", e ? e : "(no message)");
    return 3;
  }}
  for (size_t i = 0; i < n_out; ++i) {{
    std::string base = std::string(argv[2]) + "/output_" + std::to_string(i);
    int rank = m->output_rank(i);
    // NonZero's count and the like: the run's extents, within the buffer of the maxima.
    const int64_t* dims = m->output_shape(ctx, i);
    if (!dims) dims = m->output_dims(i);
    FILE* f = std::fopen((base + ".bin").c_str(), "wb");
    FILE* meta = std::fopen((base + ".meta").c_str(), "wb");
    if (!f || !meta) {{
      std::fprintf(stderr, "%s: cannot write\n", base.c_str());
      return 2;
    }}
    std::fwrite(out[i], 1, tensor_bytes(m->output_dtype(i), rank, dims), f);
    std::fprintf(meta, "%d %d", m->output_dtype(i), rank);
    for (int d = 0; d < rank; ++d) std::fprintf(meta, " %lld", static_cast<long long>(dims[d]));
    std::fprintf(meta, "\n%s", m->output_name(i));
    std::fclose(f);
    std::fclose(meta);
  }}
  m->destroy(ctx);
  return 0;
}}
)cpp",
                     fmt::arg("table", table));
}

constexpr const char* kDriverIncludes =
    "#include <cstdint>\n#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n#include <string>\n"
    "#include <vector>\n#include \"kiln/rt/dtype.h\"\n";

struct ModelFiles {
  std::string name;
  fs::path src;  // N.h, model.cpp, metadata.cpp, N_weights.cpp, N.weights
};

// Every #include of a model's files that is not one of the model's own files.
void collect_includes(const ModelFiles& m, std::vector<std::string>& out, std::set<std::string>& seen) {
  for (const char* f : {"model.cpp", "metadata.cpp"}) {
    std::istringstream text(read_file(m.src / f));
    for (std::string line; std::getline(text, line);) {
      if (line.rfind("#include", 0) != 0) continue;
      if (line.find("\"" + m.name + ".h\"") != std::string::npos) continue;
      if (seen.insert(line).second) out.push_back(line);
    }
  }
  std::istringstream header(read_file(m.src / (m.name + ".h")));
  for (std::string line; std::getline(header, line);)
    if (line.rfind("#include", 0) == 0 && seen.insert(line).second) out.push_back(line);
}

// One translation unit holding every model of a batch: the headers they include come
// first, so that each model's files, included inside namespaces kc_N and kc_N_meta, only
// add the model's own code; its C API symbols are already unique by their N_ prefix.
std::string unity_source(const std::vector<ModelFiles>& models) {
  std::vector<std::string> includes;
  std::set<std::string> seen;
  for (const ModelFiles& m : models) collect_includes(m, includes, seen);
  std::string s = "// Generated by kiln_conformance: a batch of compiled conformance cases.\n";
  for (const std::string& i : includes) s += i + "\n";
  s += kDriverIncludes;
  s += kModelApi;
  std::vector<std::string> names;
  for (const ModelFiles& m : models) {
    s += fmt::format("\nnamespace kc_{0} {{\n#include \"{1}/model.cpp\"\n}}  // namespace kc_{0}\n", m.name,
                     m.src.string());
    s += fmt::format("namespace kc_{0}_meta {{\n#include \"{1}/metadata.cpp\"\n}}  // namespace kc_{0}_meta\n",
                     m.name, m.src.string());
    s += fmt::format("#include \"{}/{}_weights.cpp\"\n", m.src.string(), m.name);
    s += adapter(m.name);
    names.push_back(m.name);
  }
  return s + driver_main(names);
}

// The same for one model compiled the ordinary way: its files as they are, plus this driver.
std::string plain_driver_source(const ModelFiles& m) {
  return fmt::format("// Generated by kiln_conformance.\n#include \"{}.h\"\n{}{}{}{}", m.name, kDriverIncludes,
                     kModelApi, adapter(m.name), driver_main({m.name}));
}

// The first compiler error in a log, without the file's folder, shortened, for the report.
std::string first_error(const std::string& log) {
  std::istringstream in(log);
  std::string found;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    bool error = line.find("error") != std::string::npos || line.find("undefined reference") != std::string::npos;
    if (error || found.empty()) found = line;
    if (error) break;
  }
  size_t colon = found.find(": ");
  size_t slash = colon == std::string::npos ? std::string::npos : found.rfind('/', colon);
  if (slash != std::string::npos) found = found.substr(slash + 1);
  return found.size() > 400 ? found.substr(0, 400) + "..." : found;
}

struct Batch {
  std::vector<size_t> members;  // indices into results
  bool unity = true;
  fs::path dir;
};

class BatchBuilder {
 public:
  BatchBuilder(std::vector<CaseResult>& results, const CompileSettings& s, fs::path rt_include,
               std::vector<std::string> rt_objects, std::ostream& log)
      : results_(results), s_(s), rt_include_(std::move(rt_include)), rt_objects_(std::move(rt_objects)), log_(log) {}

  void build(const std::vector<size_t>& ready) {
    for (size_t i = 0; i < ready.size(); i += s_.batch_size)
      add({std::vector<size_t>(ready.begin() + i, ready.begin() + std::min(ready.size(), i + s_.batch_size)), true, {}});
    size_t initial = jobs_.size();
    fmt::print(log_, "compiling {} models in {} batches ({} jobs, {})\n", ready.size(), initial, s_.jobs, s_.opt);
    auto start = std::chrono::steady_clock::now();
    run_jobs(jobs_, s_.jobs, [&](size_t done, size_t total) {
      if (done % 5 == 0 || done == total)
        fmt::print(log_, "  {}/{} batches built ({:.0f} s)\n", done, total,
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    });
  }

 private:
  ModelFiles files(size_t i) const { return {results_[i].model, fs::path(results_[i].work_dir) / "src"}; }

  void add(Batch b) {
    b.dir = fs::path(s_.work_dir) / "batches" / fmt::format("b{:04d}", serial_++);
    fs::create_directories(b.dir);
    std::vector<std::string> compile = {s_.cxx, "-std=c++17", s_.opt, "-pthread", "-w", "-I", rt_include_.string()};
    std::vector<std::vector<std::string>> commands;
    std::vector<std::string> objects;
    if (b.unity) {
      std::vector<ModelFiles> models;
      for (size_t i : b.members) models.push_back(files(i));
      write_file(b.dir / "batch.cpp", unity_source(models));
      std::vector<std::string> c = compile;
      for (const ModelFiles& m : models) c.push_back("-Wa,-I," + m.src.string());
      c.insert(c.end(), {"-c", (b.dir / "batch.cpp").string(), "-o", (b.dir / "batch.o").string()});
      commands.push_back(c);
      objects.push_back((b.dir / "batch.o").string());
    } else {
      ModelFiles m = files(b.members[0]);
      write_file(b.dir / "driver.cpp", plain_driver_source(m));
      std::vector<fs::path> sources = {b.dir / "driver.cpp", m.src / "model.cpp", m.src / "metadata.cpp",
                                       m.src / (m.name + "_weights.cpp")};
      for (const fs::path& f : sources) {
        std::vector<std::string> c = compile;
        std::string obj = (b.dir / (f.stem().string() + ".o")).string();
        c.insert(c.end(), {"-I", m.src.string(), "-Wa,-I," + m.src.string(), "-c", f.string(), "-o", obj});
        commands.push_back(c);
        objects.push_back(obj);
      }
    }
    std::vector<std::string> link = {s_.cxx, "-pthread", "-o", (b.dir / "run").string()};
    link.insert(link.end(), objects.begin(), objects.end());
    link.insert(link.end(), rt_objects_.begin(), rt_objects_.end());
    commands.push_back(link);

    Job j;
    j.function = [commands] {
      for (const auto& c : commands)
        if (int rc = run_sync(c); rc != 0) return rc;
      return 0;
    };
    j.log_path = (b.dir / "build.log").string();
    j.timeout_s = b.members.size() > 1 ? s_.compile_timeout_s : std::min(s_.compile_timeout_s, 300.0);
    j.done = [this, b](const JobStatus& st) { finished(b, st); };
    jobs_.push_back(std::move(j));
  }

  void finished(const Batch& b, const JobStatus& st) {
    if (st.ok()) {
      for (size_t i : b.members) results_[i].exe = (b.dir / "run").string();
      return;
    }
    if (b.members.size() > 1) {
      // Find the models that do not compile: halves, down to one model each.
      size_t half = b.members.size() / 2;
      add({std::vector<size_t>(b.members.begin(), b.members.begin() + half), true, {}});
      add({std::vector<size_t>(b.members.begin() + half, b.members.end()), true, {}});
      return;
    }
    if (b.unity) {  // alone in a batch and still failing: try its files as they are
      add({b.members, false, {}});
      return;
    }
    std::string why = st.timed_out ? st.describe(std::min(s_.compile_timeout_s, 300.0))
                                    : first_error(read_file(b.dir / "build.log"));
    results_[b.members[0]].compiled = {Outcome::Fail, "generated C++ does not build: " + why};
  }

  std::vector<CaseResult>& results_;
  const CompileSettings& s_;
  fs::path rt_include_;
  std::vector<std::string> rt_objects_;
  std::ostream& log_;
  std::deque<Job> jobs_;
  int serial_ = 0;
};

// The outputs a driver wrote, as tensors.
std::vector<std::pair<std::string, ir::Tensor>> read_outputs(const fs::path& dir) {
  std::vector<std::pair<std::string, ir::Tensor>> out;
  for (size_t k = 0;; ++k) {
    fs::path meta = dir / fmt::format("output_{}.meta", k);
    if (!fs::exists(meta)) break;
    std::istringstream m(read_file(meta));
    int code = 0, rank = 0;
    m >> code >> rank;
    std::vector<int64_t> dims(static_cast<size_t>(std::max(rank, 0)));
    for (int64_t& d : dims) m >> d;
    std::string name;
    std::getline(m, name);
    std::getline(m, name);
    std::optional<ir::DType> dtype = ir::dtype_from_code(code);
    if (!m.eof() && !m) fail("{}: unreadable", meta.string());
    if (!dtype) fail("output {}: dtype code {} unknown to kiln's IR", k, code);
    ir::Tensor t(*dtype, dims);
    std::string bytes = read_file(dir / fmt::format("output_{}.bin", k));
    if (bytes.size() != t.nbytes()) fail("output {}: {} bytes written, {} expected", k, bytes.size(), t.nbytes());
    std::memcpy(t.mutable_raw(), bytes.data(), bytes.size());
    out.emplace_back(name, std::move(t));
  }
  return out;
}

// One data set's outputs against the stored ones: "" or what differs.
std::string check_outputs(const CaseResult& r, const std::string& set, const fs::path& out_dir) {
  std::vector<std::pair<std::string, ir::Tensor>> got = read_outputs(out_dir);
  std::vector<ir::Tensor> expected;
  for (size_t k = 0;; ++k) {
    fs::path p = fs::path(r.c.dir) / set / fmt::format("output_{}.pb", k);
    if (!fs::exists(p)) break;
    expected.push_back(frontend::load_tensor_proto_file(p.string()));
  }
  if (got.size() != expected.size()) return fmt::format("{} outputs, {} expected", got.size(), expected.size());
  for (size_t k = 0; k < got.size(); ++k) {
    std::string diff = compare_tensor(got[k].first, expected[k], got[k].second, {r.c.rtol, r.c.atol});
    if (!diff.empty()) return (r.c.data_sets.size() > 1 ? set + ": " : "") + diff;
  }
  return "";
}

void run_cases(std::vector<CaseResult>& results, const CompileSettings& s, std::ostream& log) {
  std::deque<Job> jobs;
  std::vector<std::vector<PathResult>> per_set(results.size());
  size_t cases = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    CaseResult& r = results[i];
    if (!r.sources_ready || r.exe.empty()) continue;
    ++cases;
    per_set[i].resize(r.c.data_sets.size());
    for (size_t set = 0; set < r.c.data_sets.size(); ++set) {
      fs::path out = fs::path(r.work_dir) / fmt::format("set{}_out", set);
      fs::remove_all(out);
      fs::create_directories(out);
      Job j;
      j.argv = {r.exe, r.model, out.string()};
      for (size_t k = 0;; ++k) {
        fs::path in = fs::path(r.work_dir) / fmt::format("set{}_input_{}.bin", set, k);
        if (!fs::exists(in)) break;
        j.argv.push_back(in.string());
      }
      j.log_path = (fs::path(r.work_dir) / fmt::format("set{}_run.log", set)).string();
      j.timeout_s = s.run_timeout_s;
      j.done = [&, i, set, out, log_path = j.log_path](const JobStatus& st) {
        PathResult& p = per_set[i][set];
        if (!st.ok()) {
          std::string message = read_file(log_path);
          while (!message.empty() && message.back() == '\n') message.pop_back();
          if (message.size() > 400) message = message.substr(0, 400) + "...";
          p = {Outcome::Fail, st.signal || st.timed_out ? st.describe(s.run_timeout_s) + (message.empty() ? "" : ": " + message)
                                                        : message.empty() ? st.describe(s.run_timeout_s) : message};
          return;
        }
        try {
          std::string diff = check_outputs(results[i], results[i].c.data_sets[set], out);
          p = diff.empty() ? PathResult{Outcome::Pass, ""} : PathResult{Outcome::Fail, diff};
        } catch (const Error& e) {
          p = {Outcome::Fail, e.what()};
        }
      };
      jobs.push_back(std::move(j));
    }
  }
  fmt::print(log, "running {} compiled cases\n", cases);
  auto start = std::chrono::steady_clock::now();
  run_jobs(jobs, s.jobs);
  fmt::print(log, "  ran them in {:.0f} s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  for (size_t i = 0; i < results.size(); ++i) {
    if (per_set[i].empty()) continue;
    PathResult overall{Outcome::Pass, ""};
    for (const PathResult& p : per_set[i])
      if (p.outcome != Outcome::Pass) {
        overall = p;
        break;
      }
    results[i].compiled = overall;
  }
}

}  // namespace

void build_and_run_compiled(std::vector<CaseResult>& results, const CompileSettings& s, std::ostream& log) {
  std::vector<size_t> ready;
  for (size_t i = 0; i < results.size(); ++i)
    if (results[i].sources_ready) ready.push_back(i);
  if (ready.empty()) return;
  fs::remove_all(fs::path(s.work_dir) / "batches");
  std::pair<fs::path, std::vector<std::string>> rt;
  try {
    rt = runtime_objects(s, log);
  } catch (const Error& e) {
    for (size_t i : ready) results[i].compiled = {Outcome::Fail, e.what()};
    return;
  }
  BatchBuilder(results, s, rt.first, rt.second, log).build(ready);
  run_cases(results, s, log);
}

}  // namespace kiln::conformance
