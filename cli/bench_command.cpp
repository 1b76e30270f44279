// kiln bench MODEL: the compiled model against framework baselines (docs/guide/benchmarking.md).
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "cli/bench_adapters.h"
#include "cli/bench_result.h"
#include "cli/bench_run.h"
#include "cli/child_process.h"
#include "cli/commands.h"
#include "cli/interrupt.h"
#include "cli/model_loader.h"
#include "frontend/tensorflow/tf_importer.h"
#include "codegen/cpp/cpp_backend.h"
#include "ir/error.h"
#include "passes/precision.h"

namespace kiln::cli {

namespace fs = std::filesystem;

namespace {

struct BenchArgs {
  std::string model;
  std::string params;  // --params FILE.npz (StableHLO)
  TensorFlowSelection tf;  // --signature, --input, --output
  std::string compiled;  // an OUTDIR of kiln compile, instead of compiling
  std::string against = "auto";
  std::vector<std::string> baseline_models;  // ENGINE=PATH
  std::string inputs;
  int batch = 0;  // 0: the model's own
  int threads = 1;
  std::string precision;    // empty: fp32, or what --compiled was compiled in
  std::string calibration;  // --precision int8: the calibration samples
  std::vector<std::string> dims;
  std::vector<std::string> input_shapes;
  int rounds = 10, runs = 10, warmup = 5;
  uint64_t seed = 42;
  std::string json, markdown, html;
  double slower_than = 0, error_above = -1;
  std::string python;
  std::string work_dir;
  bool keep_work = false;
};

std::string self_exe() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) fail("cannot find the kiln executable: {}", ec.message());
  return p.string();
}

std::string now_utc() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string cpu_name() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
      return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f) fail("{}: cannot write", path);
}

long long bytes_of(const fs::path& p) {
  std::error_code ec;
  auto n = fs::file_size(p, ec);
  return ec ? -1 : static_cast<long long>(n);
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream s(text);
  for (std::string item; std::getline(s, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

// The model's graph with every dim bound (--dim, and --batch for a symbolic first dim of
// the first input); `batch` becomes the batch the inputs have.
std::unique_ptr<ir::Graph> load_for_bench(const BenchArgs& args, int& batch, std::vector<std::string>& dims) {
  PhaseTimer timer(false);
  LoadOptions load;  // optimized, so that outputs whose shapes follow from constants are static
  dims = args.dims;
  load.dims = parse_dims(dims);
  load.input_shapes = args.input_shapes;
  load.params = args.params;
  load.tf = args.tf;
  std::unique_ptr<ir::Graph> graph = load_model(args.model, load, timer);
  if (graph->inputs().empty() || graph->inputs()[0]->shape().rank() == 0) {
    if (args.batch > 1) fail("--batch {}: the model's first input has no batch dimension", args.batch);
    batch = 1;
    return graph;
  }
  const ir::Dim first = graph->inputs()[0]->shape()[0];
  if (first.is_static()) {
    if (args.batch > 0 && args.batch != first.value())
      fail("--batch {}: the model's batch dimension is fixed at {} (export it with a symbolic batch to vary it)",
           args.batch, first.value());
    batch = static_cast<int>(first.value());
    return graph;
  }
  batch = args.batch > 0 ? args.batch : 1;
  dims.push_back(fmt::format("{}={}", first.name(), batch));
  load.dims = parse_dims(dims);
  return load_model(args.model, load, timer);
}

// The executable in a kiln compile OUTDIR: OUTDIR/<name>, else its only executable program
// (libNAME.so is executable to the file system, but a library).
fs::path find_executable(const fs::path& dir, const std::string& name) {
  if (fs::is_regular_file(dir / name)) return dir / name;
  std::vector<fs::path> found;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string file = e.path().filename().string();
    const bool library = e.path().extension() == ".so" || file.find(".so.") != std::string::npos;
    if (e.is_regular_file() && !library && access(e.path().c_str(), X_OK) == 0) found.push_back(e.path());
  }
  if (found.size() != 1)
    fail("--compiled {}: expected one executable (from kiln compile --emit exe), found {}", dir.string(), found.size());
  return found[0];
}

// The precision an executable was compiled in, from its --version ("..., precision int8,
// ..."); "" when it does not say (compiled by an older kiln).
std::string compiled_precision(const fs::path& exe, const fs::path& work) {
  const fs::path log = work / "version.log";
  if (run_to_completion({exe.string(), "--version"}, log) != 0) return "";
  std::ifstream f(log);
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const size_t at = text.find("precision ");
  if (at == std::string::npos) return "";
  const size_t start = at + 10, end = text.find_first_of(",\n ", start);
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// Compiles the model (or takes --compiled) and fills kiln's compile figures.
fs::path kiln_executable(const BenchArgs& args, const std::vector<std::string>& dims, const fs::path& work,
                         EngineResult& kiln) {
  const std::string name = codegen::cpp::c_identifier(model_stem(args.model));
  fs::path dir = args.compiled.empty() ? work / "compiled" : fs::path(args.compiled);
  if (args.compiled.empty()) {
    fmt::print(stderr, "kiln bench: compiling {}\n", args.model);
    std::vector<std::string> argv = {self_exe(), "compile", args.model, "-o", dir.string(), "--emit", "exe,lib", "--name", name};
    for (const std::string& d : dims) argv.insert(argv.end(), {"--dim", d});
    for (const std::string& s : args.input_shapes) argv.insert(argv.end(), {"--input-shape", s});
    if (!args.params.empty()) argv.insert(argv.end(), {"--params", args.params});
    if (args.tf.signature != "serving_default") argv.insert(argv.end(), {"--signature", args.tf.signature});
    for (const std::string& s : args.tf.inputs) argv.insert(argv.end(), {"--input-node", s});
    for (const std::string& s : args.tf.outputs) argv.insert(argv.end(), {"--output-node", s});
    if (!args.precision.empty()) argv.insert(argv.end(), {"--precision", args.precision});
    if (!args.calibration.empty()) argv.insert(argv.end(), {"--calibration", args.calibration});
    const auto t0 = std::chrono::steady_clock::now();
    const int status = run_to_completion(argv, work / "compile.log");
    kiln.compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (status != 0) fail("compiling {} failed:\n{}", args.model, tail_of(work / "compile.log", 20));
  }
  fs::path exe = find_executable(dir, name);
  const std::string precision = compiled_precision(exe, work);
  if (!args.precision.empty() && !precision.empty() && precision != args.precision)
    fail("--precision {}: {} was compiled with --precision {}", args.precision, exe.string(), precision);
  kiln.precision = !precision.empty() ? precision : !args.precision.empty() ? args.precision : "unknown";
  kiln.executable_bytes = bytes_of(exe);
  kiln.static_library_bytes = bytes_of(dir / ("lib" + exe.filename().string() + ".a"));
  return exe;
}

// The baselines to run: each probed; a missing framework is skipped unless asked for by name.
void add_baselines(const BenchArgs& args, const std::string& python, const std::vector<fs::path>& inputs,
                   const fs::path& work, std::vector<EngineResult>& results, std::vector<EngineLaunch>& launches,
                   std::vector<std::string>& against) {
  const bool automatic = args.against == "auto";
  // The model's own framework runs it as given: ONNX Runtime an .onnx model, PyTorch a TorchScript archive,
  // TensorFlow a SavedModel. A StableHLO model or a frozen GraphDef has no baseline yet (no adapter).
  const ModelFormat format = model_format(args.model);
  const std::string own = format == ModelFormat::Onnx          ? "onnxruntime"
                          : format == ModelFormat::StableHlo   ? "none"
                          : format == ModelFormat::TensorFlow ? (frontend::is_saved_model_dir(args.model) ? "tensorflow" : "none")
                                                               : "torch";
  against = automatic ? std::vector<std::string>{own} : split_list(args.against);
  std::map<std::string, std::string> models = {{own, args.model}};
  for (const std::string& spec : args.baseline_models) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) fail("--baseline-model {}: expected ENGINE=PATH", spec);
    models[spec.substr(0, eq)] = spec.substr(eq + 1);
  }
  for (const std::string& engine : against) {
    if (engine == "none") continue;
    bool known = false;
    for (const std::string& k : known_engines()) known = known || k == engine;
    if (!known) fail("--against {}: unknown engine '{}' (known: onnxruntime, torch, tensorflow)", args.against, engine);
    EngineResult r;
    r.name = engine;
    fs::path adapter = write_adapter(work / "adapters", engine);
    std::string reason;
    r.version = probe_engine(python, adapter, work / (engine + ".probe.log"), reason);
    if (r.version.empty()) {
      if (!automatic) fail("--against {}: {} (python: {}; choose one with --python or KILN_PYTHON)", engine, reason, python);
      r.status = "skipped";
      r.reason = reason;
    } else if (!models.count(engine)) {
      if (!automatic) fail("--against {}: give the {} model with --baseline-model {}=PATH", engine, engine, engine);
      r.status = "skipped";
      r.reason = "no model given (--baseline-model)";
    }
    fmt::print(stderr, "kiln bench: {}: {}\n", engine, r.ok() ? "version " + r.version : r.status + ": " + r.reason);
    if (r.ok()) {
      EngineLaunch l{{python, adapter.string(), "--model", models[engine], "--threads", std::to_string(args.threads), "--serve"},
                     work / (engine + ".log")};
      if (engine == "tensorflow" && args.tf.signature != "serving_default")
        l.argv.insert(l.argv.end(), {"--signature", args.tf.signature});
      for (const fs::path& p : inputs) l.argv.push_back(p.string());
      launches.push_back(std::move(l));
    }
    results.push_back(std::move(r));
  }
}

Comparison compare_with(const EngineResult& kiln, const EngineResult& base, const std::vector<TensorSpec>& outputs,
                        const fs::path& outputs_dir) {
  Comparison c;
  c.baseline = base.name;
  auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  c.p50_ratio = ratio(kiln.latency.p50, base.latency.p50);
  c.p90_ratio = ratio(kiln.latency.p90, base.latency.p90);
  c.p99_ratio = ratio(kiln.latency.p99, base.latency.p99);
  c.cold_ratio = ratio(kiln.cold_ms, base.cold_ms);
  c.throughput_ratio = ratio(kiln.throughput_per_s, base.throughput_per_s);
  c.peak_rss_ratio = ratio(static_cast<double>(kiln.peak_rss_bytes), static_cast<double>(base.peak_rss_bytes));
  for (size_t k = 0; k < outputs.size(); ++k) {
    const std::string file = fmt::format("output_{}.npy", k);
    try {
      c.agreement.push_back(compare_tensors(outputs[k].name, read_tensor(outputs_dir / kiln.name / file),
                                            read_tensor(outputs_dir / base.name / file)));
    } catch (const Error& e) {
      Agreement a;
      a.output = outputs[k].name;
      a.problem = e.what();
      c.agreement.push_back(a);
    }
  }
  return c;
}

void add_checks(const BenchArgs& args, BenchReport& r) {
  if (args.slower_than > 0) {
    Check c{"fail-if-slower-than", args.slower_than, true, ""};
    for (const Comparison& cmp : r.comparisons)
      if (cmp.p50_ratio > args.slower_than) {
        c.passed = false;
        c.reason += fmt::format("{}kiln takes {:.2f}x the time of {} at p50 (limit {:.2f}x)", c.reason.empty() ? "" : "; ",
                                cmp.p50_ratio, cmp.baseline, args.slower_than);
      }
    if (r.comparisons.empty()) {
      c.passed = false;
      c.reason = "no baseline ran to compare with";
    } else if (c.passed) {
      std::vector<std::string> parts;
      for (const Comparison& cmp : r.comparisons) parts.push_back(fmt::format("{:.2f}x of {}", cmp.p50_ratio, cmp.baseline));
      c.reason = fmt::format("kiln p50 time is {}", fmt::join(parts, ", "));
    }
    r.checks.push_back(c);
  }
  if (args.error_above >= 0) {
    Check c{"fail-if-error-above", args.error_above, true, ""};
    double worst = 0;
    for (const Comparison& cmp : r.comparisons)
      for (const Agreement& a : cmp.agreement) {
        if (!a.problem.empty() || !(a.max_rel_error <= args.error_above)) {
          c.passed = false;
          c.reason += fmt::format("{}output '{}' vs {}: {}", c.reason.empty() ? "" : "; ", a.output, cmp.baseline,
                                  a.problem.empty() ? fmt::format("max rel error {:.3g} (limit {:.3g})", a.max_rel_error, args.error_above)
                                                    : a.problem);
        }
        worst = std::max(worst, a.max_rel_error);
      }
    if (r.comparisons.empty()) {
      c.passed = false;
      c.reason = "no baseline ran to compare with";
    } else if (c.passed) {
      c.reason = fmt::format("largest max rel error {:.3g}", worst);
    }
    r.checks.push_back(c);
  }
}

// --precision and --calibration, checked before any work: compiling passes them on.
void check_precision(const BenchArgs& args) {
  if (args.precision.empty()) {
    if (!args.calibration.empty()) fail("--calibration applies to --precision int8 only");
    return;
  }
  const std::optional<passes::Precision> p = passes::parse_precision(args.precision);
  if (!p) fail("--precision {}: expected fp32, fp16, bf16, int8 or int8-dynamic", args.precision);
  if (!args.compiled.empty()) {
    if (!args.calibration.empty()) fail("--calibration: --compiled measures an earlier compile, nothing is calibrated");
    return;
  }
  if (*p == passes::Precision::Int8 && args.calibration.empty())
    fail("--precision int8 needs calibration samples (--calibration DIR, as for kiln compile)");
  if (*p != passes::Precision::Int8 && !args.calibration.empty()) fail("--calibration applies to --precision int8 only");
}

int run_bench(const BenchArgs& args) {
  check_precision(args);
  if (args.rounds < 1 || args.runs < 1 || args.warmup < 0) fail("--rounds and --runs must be at least 1, --warmup at least 0");
  const std::string python = python_interpreter(args.python);
  std::unique_ptr<TemporaryDirectory> tmp;  // removed at the end, or when interrupted
  fs::path work = args.work_dir;
  if (work.empty()) {
    tmp = std::make_unique<TemporaryDirectory>("kiln-bench");
    work = tmp->path();
    if (args.keep_work) tmp->keep();
  }
  fs::create_directories(work);
  struct Announce {
    fs::path dir;
    bool keep;
    ~Announce() {
      if (keep) fmt::print(stderr, "kiln bench: the compiled model, inputs, outputs and logs are in {}\n", dir.string());
    }
  } announce{work, args.keep_work || !args.work_dir.empty()};

  BenchReport report;
  report.kiln_version = KILN_VERSION_STRING;
  report.created = now_utc();
  report.model_path = args.model;
  report.model_name = model_stem(args.model);
  if (report.model_name == "model") report.model_name = fs::path(args.model).parent_path().filename().string();
  report.cpu = cpu_name();
  report.cores = static_cast<int>(std::thread::hardware_concurrency());
  BenchSettings& st = report.settings;
  st.threads = args.threads;
  st.precision = args.precision.empty() ? "fp32" : args.precision;  // --compiled: what it was compiled in, below
  st.rounds = args.rounds;
  st.runs_per_round = args.runs;
  st.warmup = args.warmup;
  st.seed = args.seed;
  st.inputs = args.inputs.empty() ? "generated" : args.inputs;
  st.python = python;

  std::vector<std::string> dims;
  std::unique_ptr<ir::Graph> graph = load_for_bench(args, st.batch, dims);
  report.inputs = tensor_specs(graph->inputs());
  report.outputs = tensor_specs(graph->outputs());
  graph.reset();  // its weights would only take memory from the engines being measured
  std::vector<fs::path> inputs = prepare_inputs(report.inputs, args.inputs, args.seed, work / "inputs");

  EngineResult kiln;
  kiln.name = "kiln";
  kiln.is_kiln = true;
  kiln.version = KILN_VERSION_STRING;
  // The baselines first: a missing one fails before the compile, not after.
  std::vector<EngineResult> baselines;
  std::vector<EngineLaunch> baseline_launches;
  add_baselines(args, python, inputs, work, baselines, baseline_launches, st.against);
  fs::path exe = kiln_executable(args, dims, work, kiln);
  st.precision = kiln.precision;
  std::vector<EngineResult> results = {kiln};
  std::vector<EngineLaunch> launches = {{{exe.string(), "--bench-worker", "--threads", std::to_string(args.threads)}, work / "kiln.log"}};
  for (const fs::path& p : inputs) launches[0].argv.push_back(p.string());

  std::vector<EngineResult> measured = {kiln};
  for (const EngineResult& b : baselines)
    if (b.ok()) measured.push_back(b);
  for (const EngineLaunch& l : baseline_launches) launches.push_back(l);
  run_engines(launches, measured, {args.rounds, args.runs, args.warmup, st.batch}, work / "outputs");

  report.engines = measured;
  for (const EngineResult& b : baselines)
    if (!b.ok()) report.engines.push_back(b);
  for (size_t i = 1; i < measured.size(); ++i)
    if (measured[i].ok()) report.comparisons.push_back(compare_with(measured[0], measured[i], report.outputs, work / "outputs"));
  add_checks(args, report);

  fmt::print("{}", bench_terminal_table(report));
  if (!args.json.empty()) write_text(args.json, bench_json(report));
  if (!args.markdown.empty()) write_text(args.markdown, bench_markdown(report));
  if (!args.html.empty()) write_text(args.html, bench_html(report));
  for (const Check& c : report.checks)
    if (!c.passed) fmt::print(stderr, "kiln bench: --{} {} failed: {}\n", c.name, c.threshold, c.reason);
  return report.passed() ? 0 : 3;
}

}  // namespace

Command add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand("bench", "measure the compiled model against framework baselines (docs/guide/benchmarking.md)");
  cmd->add_option("model", args->model, "the model file (.onnx, a PyTorch .pt/.pt2 archive, or StableHLO .mlir text)")->required();
  cmd->add_option("--compiled", args->compiled, "an OUTDIR of kiln compile to measure instead of compiling MODEL");
  cmd->add_option("--against", args->against,
                  "baselines, comma-separated: onnxruntime, torch, tensorflow, or none; auto (default): the "
                  "model's own framework, skipped if it cannot be imported");
  cmd->add_option("--baseline-model", args->baseline_models,
                  "ENGINE=PATH: the model for a baseline in its own format (torch=model.pt, tensorflow=saved_model/)");
  cmd->add_option("--inputs", args->inputs, "folder with input_K.npy (or NAME.npy) files; default: generated from --seed");
  cmd->add_option("--batch", args->batch, "batch size, for a model whose first input has a symbolic first dim");
  cmd->add_option("--threads", args->threads, "threads per run, for every engine")->capture_default_str();
  cmd->add_option("--input-shape", args->input_shapes,
                  "an input's shape, [NAME=]D0,D1,...[:DTYPE] (repeatable; unnamed ones in input order; needed for "
                  "TorchScript archives, which record none)")->allow_extra_args(false);
  cmd->add_option("--precision", args->precision,
                  "compile in fp32 (default), fp16, bf16, int8-dynamic or int8 (needs --calibration); with --compiled, "
                  "must match what it was compiled in");
  cmd->add_option("--calibration", args->calibration, "--precision int8: the calibration samples (as for kiln compile)");
  cmd->add_option("--dim", args->dims, "give a symbolic dim a value, e.g. --dim seq=128 (repeatable)");
  add_tensorflow_options(cmd, args->tf);
  cmd->add_option("--params", args->params,
                  "StableHLO (.mlir) models: an .npz with values for arguments of @main, by index (arg0, arg1, ...) or by the name JAX gives them with as_text(debug_info=True); the other arguments are the inputs");
  cmd->add_option("--rounds", args->rounds, "rounds; each runs every engine in turn")->capture_default_str();
  cmd->add_option("--runs", args->runs, "timed runs per engine per round")->capture_default_str();
  cmd->add_option("--warmup", args->warmup, "untimed runs per engine before the rounds")->capture_default_str();
  cmd->add_option("--seed", args->seed, "seed of the generated inputs")->capture_default_str();
  cmd->add_option("--json", args->json, "write the report as JSON (schema: docs/bench.schema.json)");
  cmd->add_option("--markdown", args->markdown, "write the report as Markdown");
  cmd->add_option("--html", args->html, "write the report as a self-contained HTML page with charts");
  cmd->add_option("--fail-if-slower-than", args->slower_than,
                  "exit 3 if kiln's p50 latency is more than RATIO times a baseline's");
  cmd->add_option("--fail-if-error-above", args->error_above,
                  "exit 3 if any output's max rel error against a baseline is above E");
  cmd->add_option("--python", args->python, "the Python that runs the baselines (default: $KILN_PYTHON, else python3)");
  cmd->add_option("--work-dir", args->work_dir, "keep the compiled model, inputs, outputs and logs here");
  cmd->add_flag("--keep-work", args->keep_work, "keep the temporary work folder (its path is printed)");
  return {cmd, [args] { return run_bench(*args); }};
}

}  // namespace kiln::cli
