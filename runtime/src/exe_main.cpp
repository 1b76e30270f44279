#include "kiln/rt/exe_main.h"

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "kiln/rt/bench_worker.h"
#include "kiln/rt/lowp.h"
#include "kiln/rt/npy.h"
#include "kiln/rt/sanitize.h"
#include "kiln/rt/thread_pool.h"
#include "kiln/rt/trace.h"

namespace kiln::rt {
namespace {

// An error that ends the program with one line on stderr.
struct Failure {
  std::string message;
};

// "[1,1..256,32..960:32]": an input's dims with the bounds (and steps) of its symbolic ones.
std::string bounds_str(const TensorInfo& t) {
  std::string s = "[";
  for (int i = 0; i < t.rank; ++i) {
    if (i) s += ",";
    if (t.min_dims && t.min_dims[i] != t.dims[i]) s += std::to_string(t.min_dims[i]) + "..";
    s += std::to_string(t.dims[i]);
    if (t.steps && t.steps[i] > 1) s += ":" + std::to_string(t.steps[i]);
  }
  return s + "]";
}

std::string shape_str(int rank, const int64_t* dims) {
  std::string s = "[";
  for (int i = 0; i < rank; ++i) {
    if (i) s += ",";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

struct Options {
  std::vector<std::pair<std::string, std::string>> named;  // -i NAME=FILE
  std::vector<std::string> positional;
  std::string out_dir;
  bool has_out_dir = false;
  int repeat = 1;
  int warmup = 0;  // untimed runs before the timed ones
  int threads = physical_core_count();
  std::string profile;  // --profile FILE.json
  bool bench_worker = false;
  bool help = false;
  bool version = false;
};

// An integer in [least, 1e9] (least is 0 or 1).
int parse_count(const std::string& option, const std::string& v, long least = 1) {
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno != 0 || n < least || n > 1000000000L)
    throw Failure{"option " + option + " expects a " + (least > 0 ? "positive" : "non-negative") + " integer, got '" +
                  v + "'"};
  return static_cast<int>(n);
}

Options parse_args(int argc, char** argv) {
  Options o;
  bool only_files = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (only_files || a.empty() || a[0] != '-' || a == "-") {
      o.positional.push_back(a);
      continue;
    }
    if (a == "--") {
      only_files = true;
      continue;
    }
    // --long=value or --long value / -x value
    std::string name = a, value;
    bool has_value = false;
    const size_t eq = a.find('=');
    if (a.compare(0, 2, "--") == 0 && eq != std::string::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
      has_value = true;
    }
    auto take_value = [&]() -> std::string {
      if (has_value) return value;
      if (i + 1 >= argc) throw Failure{"option " + name + " expects a value"};
      return argv[++i];
    };
    if (name == "-h" || name == "--help") {
      o.help = true;
    } else if (name == "--version") {
      o.version = true;
    } else if (name == "-i" || name == "--input") {
      const std::string v = take_value();
      const size_t e = v.find('=');
      if (e == std::string::npos || e == 0)
        throw Failure{"option " + name + " expects NAME=FILE, got '" + v + "'"};
      o.named.emplace_back(v.substr(0, e), v.substr(e + 1));
    } else if (name == "-o" || name == "--output-dir") {
      o.out_dir = take_value();
      o.has_out_dir = true;
    } else if (name == "--repeat") {
      o.repeat = parse_count(name, take_value());
    } else if (name == "--warmup") {
      o.warmup = parse_count(name, take_value(), 0);
    } else if (name == "--threads") {
      o.threads = parse_count(name, take_value());
    } else if (name == "--profile") {
      o.profile = take_value();
      if (o.profile.empty()) throw Failure{"option --profile expects a file name"};
    } else if (name == "--bench-worker") {
      o.bench_worker = true;
    } else {
      throw Failure{"unknown option '" + a + "' (see --help)"};
    }
  }
  return o;
}

void print_usage(std::FILE* out, const char* argv0, const ModelApi& api) {
  std::string prog = argv0 ? argv0 : "model";
  const size_t slash = prog.find_last_of('/');
  if (slash != std::string::npos) prog = prog.substr(slash + 1);
  std::fprintf(out, "usage: %s [options] [INPUT.npy ...]\n\n", prog.c_str());
  std::fprintf(out, "Runs the compiled model '%s' on .npy inputs.\n\n", api.model_name ? api.model_name : "");
  std::fprintf(out, "inputs (positionally in this order, or -i NAME=FILE):\n");
  for (int i = 0; i < api.n_inputs; ++i) {
    const TensorInfo& t = api.inputs[i];
    std::fprintf(out, "  %s  %s %s\n", t.name, dtype_name(t.dtype), bounds_str(t).c_str());
  }
  std::fprintf(out, "outputs:\n");
  for (int i = 0; i < api.n_outputs; ++i) {
    const TensorInfo& t = api.outputs[i];
    std::fprintf(out, "  %s  %s %s\n", t.name, dtype_name(t.dtype), shape_str(t.rank, t.dims).c_str());
  }
  std::fprintf(out,
               "\noptions:\n"
               "  -i, --input NAME=FILE   read input NAME from the .npy file FILE\n"
               "  -o, --output-dir DIR    write each output to DIR/<output>.npy (DIR is created)\n"
               "      --repeat N          run N times (outputs from the last run), print latency\n"
               "      --warmup N          run N times more first, untimed (default 0)\n"
               "      --threads N         number of threads (default: one per physical core)\n"
               "      --profile FILE.json write each run's per-node timings as a Chrome trace\n"
               "                          (open in chrome://tracing or ui.perfetto.dev)\n"
               "      --bench-worker      answer `kiln bench` requests on stdin (see kiln/rt/bench_worker.h)\n"
               "      --version           show how the model was compiled\n"
               "  -h, --help              show this help\n");
}

int64_t numel_of(const TensorInfo& t) {
  int64_t n = 1;
  for (int i = 0; i < t.rank; ++i) n *= t.dims[i];
  return n;
}

// Element i of a tensor as a double (for printing and argmax).
double element(kiln_dtype t, const unsigned char* p, int64_t i) {
  switch (t) {
    case KILN_F32: { float v; std::memcpy(&v, p + 4 * i, 4); return v; }
    case KILN_F64: { double v; std::memcpy(&v, p + 8 * i, 8); return v; }
    case KILN_F16: { uint16_t b; std::memcpy(&b, p + 2 * i, 2); return f16_bits_to_f32(b); }
    case KILN_BF16: { uint16_t b; std::memcpy(&b, p + 2 * i, 2); return bf16_bits_to_f32(b); }
    case KILN_I8: return static_cast<int8_t>(p[i]);
    case KILN_U8: return p[i];
    case KILN_BOOL: return p[i] != 0 ? 1.0 : 0.0;
    case KILN_I16: { int16_t v; std::memcpy(&v, p + 2 * i, 2); return v; }
    case KILN_U16: { uint16_t v; std::memcpy(&v, p + 2 * i, 2); return v; }
    case KILN_U32: { uint32_t v; std::memcpy(&v, p + 4 * i, 4); return v; }
    case KILN_U64: { uint64_t v; std::memcpy(&v, p + 8 * i, 8); return static_cast<double>(v); }
    case KILN_I32: { int32_t v; std::memcpy(&v, p + 4 * i, 4); return v; }
    case KILN_I64: { int64_t v; std::memcpy(&v, p + 8 * i, 8); return static_cast<double>(v); }
    case KILN_F8E4M3FN:
    case KILN_F8E4M3FNUZ:
    case KILN_F8E5M2:
    case KILN_F8E5M2FNUZ:
    case KILN_F8E8M0:
    case KILN_F4E2M1: return storage_float_to_f32(t, p[i]);
    case KILN_I4:
    case KILN_I2: return static_cast<int8_t>(p[i]);
    case KILN_U4:
    case KILN_U2: return p[i];
  }
  return 0.0;
}

std::string format_element(kiln_dtype t, const unsigned char* p, int64_t i) {
  char buf[64];
  switch (t) {
    case KILN_I64: {
      int64_t v;
      std::memcpy(&v, p + 8 * i, 8);
      std::snprintf(buf, sizeof buf, "%" PRId64, v);
      return buf;
    }
    case KILN_U64: {
      uint64_t v;
      std::memcpy(&v, p + 8 * i, 8);
      std::snprintf(buf, sizeof buf, "%" PRIu64, v);
      return buf;
    }
    case KILN_BOOL: return p[i] ? "true" : "false";
    case KILN_I8:
    case KILN_U8:
    case KILN_I16:
    case KILN_U16:
    case KILN_I32:
    case KILN_U32:
    case KILN_I4:
    case KILN_U4:
    case KILN_I2:
    case KILN_U2: std::snprintf(buf, sizeof buf, "%.0f", element(t, p, i)); return buf;
    case KILN_F32:
    case KILN_F64:
    case KILN_F16:
    case KILN_BF16:
    case KILN_F8E4M3FN:
    case KILN_F8E4M3FNUZ:
    case KILN_F8E5M2:
    case KILN_F8E5M2FNUZ:
    case KILN_F8E8M0:
    case KILN_F4E2M1: std::snprintf(buf, sizeof buf, "%.6g", element(t, p, i)); return buf;
  }
  return "?";
}

void print_summary(std::FILE* out, const TensorInfo& t, const unsigned char* data) {
  const int64_t n = numel_of(t);
  std::fprintf(out, "%s: shape %s dtype %s\n", t.name, shape_str(t.rank, t.dims).c_str(), dtype_name(t.dtype));
  const int64_t shown = n < 10 ? n : 10;
  std::string values;
  for (int64_t i = 0; i < shown; ++i) {
    if (i) values += ' ';
    values += format_element(t.dtype, data, i);
  }
  std::fprintf(out, "  values: %s%s\n", n == 0 ? "(none)" : values.c_str(), n > shown ? " ..." : "");
  if (n == 0) {
    std::fprintf(out, "  argmax: none (empty tensor)\n");
    return;
  }
  // First maximum; NaNs are skipped unless every value is NaN.
  int64_t best = -1;
  double best_v = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = element(t.dtype, data, i);
    if (v != v) continue;
    if (best < 0 || v > best_v) {
      best = i;
      best_v = v;
    }
  }
  std::fprintf(out, "  argmax: %" PRId64 "\n", best < 0 ? int64_t{0} : best);
}

struct Context {
  const ModelApi& api;
  void* ctx = nullptr;
  ~Context() {
    if (ctx != nullptr && api.destroy != nullptr) api.destroy(ctx);
  }
};

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// CPU time used by this process so far (every thread), in milliseconds.
double process_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return 1e3 * static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_nsec);
}

// Writes output i to DIR/files[i] (DIR is created); `data` holds its bytes plus one.
void write_outputs(const std::vector<TensorInfo>& infos, const std::vector<std::vector<unsigned char>>& outputs,
                   const std::string& dir, const std::vector<std::string>& files) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Failure{dir + ": cannot create the output directory: " + ec.message()};
  for (size_t i = 0; i < outputs.size(); ++i) {
    const TensorInfo& t = infos[i];
    HostTensor h;
    h.dtype = t.dtype;
    h.shape.assign(t.dims, t.dims + t.rank);
    // The run's extents: the buffer holds the maxima where dims are symbolic.
    const size_t bytes = static_cast<size_t>(numel_of(t)) * dtype_size(t.dtype);
    h.data.assign(outputs[i].begin(), outputs[i].begin() + static_cast<std::ptrdiff_t>(bytes));
    std::string e;
    if (!write_npy((std::filesystem::path(dir) / files[i]).string(), h, e)) throw Failure{e};
  }
}

// Runs a created model as the options ask: --repeat, --profile, --bench-worker, -o.
class Execution {
 public:
  Execution(const ModelApi& api, const Options& o, const void* const* inputs, std::vector<std::vector<int64_t>> in_shapes,
            std::vector<std::vector<unsigned char>> outputs, std::vector<void*> out_ptrs)
      : api_(api),
        o_(o),
        inputs_(inputs),
        in_shapes_(std::move(in_shapes)),
        outputs_(std::move(outputs)),
        out_ptrs_(std::move(out_ptrs)),
        out_info_(api.outputs, api.outputs + api.n_outputs) {}

  int run(const std::vector<std::string>& out_files, std::FILE* out, std::FILE* err) {
    Context c{api_};
    c.ctx = api_.create(o_.threads);
    ctx_ = c.ctx;
    if (c.ctx == nullptr)
      throw Failure{"cannot create the model context (threads=" + std::to_string(o_.threads) + ")"};
    set_shapes();
    if (!o_.profile.empty()) start_profiling();
    if (o_.bench_worker) return serve();
    // Warm-up runs (cold caches, first touch of the arena, a core waking up) are neither timed
    // nor profiled. Without them, the CPU time window leaves out the first timed run when there
    // are others.
    for (int r = 0; r < o_.warmup; ++r) run_untimed();
    const int skip = o_.warmup == 0 && o_.repeat > 1 ? 1 : 0;
    std::vector<double> ms;
    double cpu0 = process_cpu_ms();
    for (int r = 0; r < o_.repeat; ++r) {
      ms.push_back(run_once());
      if (r + 1 == skip) cpu0 = process_cpu_ms();
    }
    const double cpu_per_run = (process_cpu_ms() - cpu0) / std::max(1, o_.repeat - skip);
    if (o_.repeat > 1) {
      // CPU time (all threads) beside the wall time: on a shared machine the wall time includes
      // time spent descheduled, the CPU time does not (benchmarks quote kernel efficiency by it).
      // It is a mean over the runs, not a per-run median: Linux adds a running worker thread's
      // time to the process clock only at scheduler ticks (every few ms), so a run shorter than
      // a tick reads either none or a whole tick of the workers' time.
      std::fprintf(err, "latency over %d runs: median %.3f ms, min %.3f ms; cpu time mean %.3f ms (runs %d-%d)",
                   o_.repeat, median_of(ms), *std::min_element(ms.begin(), ms.end()), cpu_per_run, 1 + skip,
                   o_.repeat);
      if (o_.warmup > 0) std::fprintf(err, " after %d warm-up run%s", o_.warmup, o_.warmup == 1 ? "" : "s");
      std::fprintf(err, "\n");
    }
    if (!o_.profile.empty()) {
      std::string e;
      if (!write_chrome_trace(o_.profile, api_.model_name ? api_.model_name : "model", o_.threads, events_, e))
        throw Failure{e};
    }
    refresh_output_shapes();
    if (o_.has_out_dir)
      write_outputs(out_info_, outputs_, o_.out_dir, out_files);
    else
      for (size_t i = 0; i < outputs_.size(); ++i) print_summary(out, out_info_[i], outputs_[i].data());
    return 0;
  }

 private:
  // Symbolic dims: the inputs' extents go to the model, the outputs' come back.
  void set_shapes() {
    if (!api_.set_input_shape || !api_.output_shape) return;
    for (int i = 0; i < api_.n_inputs; ++i) {
      const std::vector<int64_t>& s = in_shapes_[static_cast<size_t>(i)];
      if (api_.set_input_shape(ctx_, i, static_cast<int>(s.size()), s.data()) != 0) check(1);
    }
    out_dims_.resize(out_info_.size());
    for (size_t i = 0; i < out_info_.size(); ++i) {
      const int64_t* d = api_.output_shape(ctx_, static_cast<int>(i));
      if (!d) check(1);
      out_dims_[i].assign(d, d + out_info_[i].rank);
      out_info_[i].dims = out_dims_[i].data();
    }
  }

  // After a run: outputs whose size depends on the data (NonZero's count) now have the
  // extents that run produced, within the buffers allocated for their capacity.
  void refresh_output_shapes() {
    if (!api_.output_shape) return;
    for (size_t i = 0; i < out_dims_.size(); ++i)
      if (const int64_t* d = api_.output_shape(ctx_, static_cast<int>(i))) out_dims_[i].assign(d, d + out_info_[i].rank);
  }

  void start_profiling() {
    if (!api_.set_profiling || !api_.node_time)
      throw Failure{"--profile: this model was compiled without profiling support"};
    if (api_.set_profiling(ctx_, 1) != 0) throw Failure{"--profile: cannot turn profiling on (out of memory)"};
    profile_origin_ = std::chrono::steady_clock::now();
  }

  void run_untimed() { check(api_.run(ctx_, inputs_, out_ptrs_.data())); }

  void check(int rc) {
    if (rc == 0) return;
    const char* why = api_.error ? api_.error(ctx_) : nullptr;
    throw Failure{std::string("run failed: ") + (why && *why ? why : "error code " + std::to_string(rc))};
  }

  // One run; its latency in milliseconds. With --profile, adds its trace events.
  double run_once() {
    const auto t0 = std::chrono::steady_clock::now();
    const int rc = api_.run(ctx_, inputs_, out_ptrs_.data());
    const auto t1 = std::chrono::steady_clock::now();
    check(rc);
    if (!o_.profile.empty()) add_events(t0, t1);
    return std::chrono::duration<double, std::milli>(t1 - t0).count();
  }

  void add_events(std::chrono::steady_clock::time_point t0, std::chrono::steady_clock::time_point t1) {
    const double run_ts = std::chrono::duration<double, std::micro>(t0 - profile_origin_).count();
    const double run_dur = std::chrono::duration<double, std::micro>(t1 - t0).count();
    events_.push_back({"run", "run", run_ts, run_dur, runs_});
    for (int i = 0; i < api_.n_nodes; ++i) {
      uint64_t start = 0, duration = 0;
      if (api_.node_time(ctx_, i, &start, &duration) != 0) continue;
      events_.push_back({api_.node_name(i), api_.node_op(i), run_ts + start / 1000.0, duration / 1000.0, runs_});
    }
    ++runs_;
  }

  int serve() {
    const double cold = run_once();
    std::vector<std::string> files;
    for (int i = 0; i < api_.n_outputs; ++i) files.push_back("output_" + std::to_string(i) + ".npy");
    BenchHooks hooks{[this] { return run_once(); },
                     [this, files](const std::string& dir) {
                       try {
                         refresh_output_shapes();
                         write_outputs(out_info_, outputs_, dir, files);
                       } catch (const Failure& f) {
                         throw std::runtime_error(f.message);
                       }
                     }};
    return serve_bench(cold, hooks, stdin, stdout);
  }

  const ModelApi& api_;
  const Options& o_;
  const void* const* inputs_;
  std::vector<std::vector<int64_t>> in_shapes_;
  std::vector<std::vector<unsigned char>> outputs_;
  std::vector<void*> out_ptrs_;
  std::vector<TensorInfo> out_info_;          // the outputs with this run's extents
  std::vector<std::vector<int64_t>> out_dims_;
  void* ctx_ = nullptr;
  std::chrono::steady_clock::time_point profile_origin_;
  std::vector<TraceEvent> events_;
  int runs_ = 0;
};

int run_main(int argc, char** argv, const ModelApi& api, std::FILE* out, std::FILE* err) {
  const Options o = parse_args(argc, argv);
  if (o.help) {
    print_usage(out, argc > 0 ? argv[0] : nullptr, api);
    return 0;
  }
  if (o.version) {
    std::fprintf(out, "%s: %s\n", api.model_name ? api.model_name : "model", api.build_info ? api.build_info : "compiled by kiln");
    return 0;
  }

  // Assign files to inputs.
  std::vector<std::string> files(static_cast<size_t>(api.n_inputs));
  std::vector<bool> given(files.size(), false);
  if (o.positional.size() > files.size())
    throw Failure{"too many inputs: got " + std::to_string(o.positional.size() + o.named.size()) +
                  ", the model has " + std::to_string(api.n_inputs)};
  for (size_t i = 0; i < o.positional.size(); ++i) {
    files[i] = o.positional[i];
    given[i] = true;
  }
  for (const auto& nv : o.named) {
    int idx = -1;
    for (int i = 0; i < api.n_inputs; ++i)
      if (nv.first == api.inputs[i].name) idx = i;
    if (idx < 0) {
      std::string names;
      for (int i = 0; i < api.n_inputs; ++i) names += std::string(i ? ", " : "") + api.inputs[i].name;
      throw Failure{"unknown input '" + nv.first + "' (the model's inputs: " + names + ")"};
    }
    if (given[static_cast<size_t>(idx)]) throw Failure{"input '" + nv.first + "' is given twice"};
    files[static_cast<size_t>(idx)] = nv.second;
    given[static_cast<size_t>(idx)] = true;
  }
  for (int i = 0; i < api.n_inputs; ++i) {
    const TensorInfo& t = api.inputs[i];
    if (!given[static_cast<size_t>(i)])
      throw Failure{std::string("input '") + t.name + "' is missing (expected " + dtype_name(t.dtype) + " " +
                    shape_str(t.rank, t.dims) + ", give it with -i " + t.name + "=FILE.npy)"};
  }

  // Output file names must not collide after sanitizing.
  std::vector<std::string> out_files;
  if (o.has_out_dir) {
    for (int i = 0; i < api.n_outputs; ++i) {
      const std::string f = sanitize_file_name(api.outputs[i].name) + ".npy";
      for (int j = 0; j < i; ++j)
        if (out_files[static_cast<size_t>(j)] == f)
          throw Failure{std::string("outputs '") + api.outputs[j].name + "' and '" + api.outputs[i].name +
                        "' would both be written to '" + f + "'"};
      out_files.push_back(f);
    }
  }

  // Read and check inputs.
  std::vector<HostTensor> inputs(files.size());
  std::vector<const void*> in_ptrs(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    const TensorInfo& t = api.inputs[i];
    std::string e;
    if (!read_npy(files[i], inputs[i], e)) throw Failure{std::string("input '") + t.name + "': " + e};
    const HostTensor& h = inputs[i];
    if (h.dtype != t.dtype)
      throw Failure{std::string("input '") + t.name + "': dtype " + dtype_name(h.dtype) +
                    " does not match the model's " + dtype_name(t.dtype) + " (" + files[i] + ")"};
    bool same_shape = static_cast<int>(h.shape.size()) == t.rank;
    for (int d = 0; same_shape && d < t.rank; ++d)
      same_shape = t.min_dims ? h.shape[d] >= t.min_dims[d] && h.shape[d] <= t.dims[d] &&
                                    (!t.steps || h.shape[d] % t.steps[d] == 0)
                              : h.shape[d] == t.dims[d];
    if (!same_shape && t.min_dims)
      throw Failure{std::string("input '") + t.name + "': shape " +
                    shape_str(static_cast<int>(h.shape.size()), h.shape.data()) + " is outside the model's bounds " +
                    bounds_str(t) + " (" + files[i] + ")"};
    if (!same_shape)
      throw Failure{std::string("input '") + t.name + "': shape " +
                    shape_str(static_cast<int>(h.shape.size()), h.shape.data()) + " does not match the model's " +
                    shape_str(t.rank, t.dims) + " (" + files[i] + ")"};
    static const unsigned char no_data[1] = {0};  // an empty tensor still gets a valid pointer
    in_ptrs[i] = h.data.empty() ? no_data : static_cast<const void*>(h.data.data());
  }

  std::vector<std::vector<unsigned char>> outputs(static_cast<size_t>(api.n_outputs));
  std::vector<void*> out_ptrs(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const TensorInfo& t = api.outputs[i];
    outputs[i].assign(static_cast<size_t>(numel_of(t)) * dtype_size(t.dtype) + 1, 0);  // +1: never empty
    out_ptrs[i] = outputs[i].data();
  }

  const void* no_inputs[1] = {nullptr};  // a model without inputs still gets a valid array
  std::vector<std::vector<int64_t>> in_shapes;
  for (const HostTensor& h : inputs) in_shapes.push_back(h.shape);
  Execution x{api, o, in_ptrs.empty() ? no_inputs : in_ptrs.data(), std::move(in_shapes), std::move(outputs),
              std::move(out_ptrs)};
  return x.run(out_files, out, err);
}

}  // namespace

void print_tensor_summary(std::FILE* out, const TensorInfo& t, const void* data) noexcept {
  try {
    print_summary(out, t, static_cast<const unsigned char*>(data));
  } catch (...) {
  }
}

int exe_main(int argc, char** argv, const ModelApi& api, std::FILE* out, std::FILE* err) noexcept {
  try {
    return run_main(argc, argv, api, out, err);
  } catch (const Failure& f) {
    std::fprintf(err, "error: %s\n", f.message.c_str());
  } catch (const std::exception& e) {
    std::fprintf(err, "error: %s\n", e.what());
  } catch (...) {
    std::fprintf(err, "error: unknown failure\n");
  }
  return 1;
}

int exe_main(int argc, char** argv, const ModelApi& api) noexcept { return exe_main(argc, argv, api, stdout, stderr); }

}  // namespace kiln::rt
