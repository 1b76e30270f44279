// kiln compile MODEL -o OUTDIR: the model as an executable, libraries and their sources.
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/limits_options.h"
#include "cli/model_loader.h"
#include "cli/pipeline_options.h"
#include "cli/precision_options.h"
#include "cli/precision_report.h"
#include "cli/static_quantization.h"
#include "cli/test_hooks.h"
#include "cli/verify.h"
#include "codegen/cpp/builder.h"
#include "codegen/cpp/cpp_backend.h"
#include "codegen/cpp/target.h"
#include "ir/error.h"
#include "ir/ops/channels_last.h"

namespace kiln::cli {

namespace fs = std::filesystem;

namespace {

struct CompileArgs {
  std::string model;
  std::string out_dir;
  std::string emit = "exe,lib,source";
  std::string name;
  std::string weights = "embedded";
  std::vector<std::string> dims;
  std::string target;  // empty: this machine's
  std::string cpu = "generic";
  codegen::cpp::EmitOptions emit_options;  // --conv-algo
  int jobs = 2;
  bool verbose = false;
  passes::PipelineOptions pipeline;  // cli/pipeline_options.h
  frontend::ImportLimits limits;
  VerifyOptions verify;  // --verify-against (cli/verify.h)
  PrecisionOptions precision;  // --precision, --calibration, --report (cli/precision_options.h)
};

std::set<std::string> parse_emit(const std::string& text) {
  std::set<std::string> kinds;
  std::stringstream s(text);
  std::string kind;
  while (std::getline(s, kind, ',')) {
    if (kind != "exe" && kind != "lib" && kind != "shared" && kind != "source")
      fail("--emit {}: unknown kind '{}' (expected exe, lib, shared or source)", text, kind);
    kinds.insert(kind);
  }
  if (kinds.empty()) fail("--emit: nothing to emit");
  return kinds;
}

// Moves `from` to `to`, replacing what was there; nothing half-written is ever visible.
// Where the file system allows it the two directories are swapped in one atomic step, so
// even a process killed midway leaves either the old OUTDIR or the new one.
void publish(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  if (!fs::exists(to, ec)) {
    fs::rename(from, to);
    return;
  }
  if (renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_EXCHANGE) == 0) {
    fs::remove_all(from, ec);  // now holds the previous output
    return;
  }
  fs::path old = to.parent_path() / fmt::format(".{}.kiln-old-{}", to.filename().string(), getpid());
  fs::rename(to, old);
  fs::rename(from, to);
  fs::remove_all(old, ec);
}

// Leftovers of kiln processes that were killed while writing OUTDIR: temporary trees are
// removed, and a previous output set aside mid-publish is put back if OUTDIR is missing.
void clean_stale_leftovers(const fs::path& out) {
  std::error_code ec;
  const std::string tmp_prefix = fmt::format(".{}.kiln-tmp-", out.filename().string());
  const std::string old_prefix = fmt::format(".{}.kiln-old-", out.filename().string());
  for (const fs::directory_entry& e : fs::directory_iterator(out.parent_path(), ec)) {
    std::string name = e.path().filename().string();
    bool is_tmp = name.rfind(tmp_prefix, 0) == 0, is_old = name.rfind(old_prefix, 0) == 0;
    if (!is_tmp && !is_old) continue;
    std::string pid_text = name.substr((is_tmp ? tmp_prefix : old_prefix).size());
    if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos) continue;
    pid_t pid = static_cast<pid_t>(std::stol(pid_text));
    if (pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH) continue;  // its owner still runs
    if (is_old && !fs::exists(out, ec))
      fs::rename(e.path(), out, ec);
    else
      fs::remove_all(e.path(), ec);
  }
}

// --target, else this machine's.
const codegen::cpp::Target& target_of(const CompileArgs& args) {
  if (!args.target.empty()) return codegen::cpp::find_target(args.target);
  if (const codegen::cpp::Target* host = codegen::cpp::host_target()) return *host;
  fail("this machine's architecture is not one kiln knows: give --target ({})", codegen::cpp::known_triples());
}

fs::path output_dir(const std::string& arg) {
  fs::path out = fs::absolute(arg).lexically_normal();
  return out.filename().empty() ? out.parent_path() : out;
}

// --verify-against: the compiled executable in `out` against the baseline; --bisect builds a
// second executable that also outputs every intermediate value.
void verify(const CompileArgs& args, const LoadOptions& load, const ir::Graph& graph,
            const codegen::cpp::CppOptions& options, const fs::path& out, const codegen::cpp::BuildOptions& build) {
  auto build_probe = [&](const fs::path& dir) {
    PhaseTimer quiet(false);
    std::unique_ptr<ir::Graph> probe = load_model(args.model, load, quiet);
    expose_intermediates(*probe);
    codegen::cpp::GeneratedModel model = codegen::cpp::generate_cpp(*probe, options);
    codegen::cpp::write_sources(model, dir / "src");
    codegen::cpp::BuildOptions exe_only = build;
    exe_only.exe = true;
    exe_only.lib = exe_only.shared = false;
    codegen::cpp::build(model, dir / "src", dir, exe_only);
    return dir / model.name;
  };
  verify_compiled(args.model, graph, out / options.name, args.verify, build_probe);
}

// The precision report (cli/precision_report.h): the compiled model against the same model
// compiled in fp32, both built as executables in a temporary directory (the first reused from
// `out` when it was emitted).
// The MatMul/Gemm and 1x1 Conv weights a bf16 compile keeps in bf16 for the native bf16 GEMM.
std::string bf16_gemm_note(const codegen::cpp::GeneratedModel& model) {
  return fmt::format("{} MatMul/Gemm/1x1 Conv weights stored as packed bf16 ({} bytes): computed in bf16 on CPUs with "
                     "AVX512_BF16, elsewhere widened to {} bytes of fp32 when the model's context is created",
                     model.bf16_gemm_weights, model.bf16_gemm_bytes, model.bf16_gemm_widened_bytes);
}

void report_precision(const CompileArgs& args, const LoadOptions& load, const ir::Graph& graph,
                      const codegen::cpp::CppOptions& options, const codegen::cpp::GeneratedModel& model,
                      const fs::path& out, const codegen::cpp::BuildOptions& build,
                      const std::vector<std::string>& notes) {
  std::string tmpl = (fs::temp_directory_path() / "kiln-report-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) fail("cannot create a temporary directory: {}", std::strerror(errno));
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup{tmpl};
  const fs::path work = tmpl;
  codegen::cpp::BuildOptions exe_only = build;
  exe_only.exe = true;
  exe_only.lib = exe_only.shared = false;
  exe_only.log = nullptr;
  fs::path exe = out / model.name;
  if (!build.exe) {
    codegen::cpp::write_sources(model, work / "src");
    codegen::cpp::build(model, work / "src", work, exe_only);
    if (options.external_weights) fs::copy_file(work / "src" / (model.name + ".weights"), work / (model.name + ".weights"));
    exe = work / model.name;
  }
  PhaseTimer quiet(false);
  LoadOptions fp32_load = load;
  fp32_load.precision = passes::Precision::FP32;
  std::unique_ptr<ir::Graph> fp32_graph = load_model(args.model, fp32_load, quiet);
  codegen::cpp::CppOptions fp32_options = options;
  fp32_options.precision = passes::Precision::FP32;
  fp32_options.external_weights = false;
  fp32_options.test_hooks = {};
  codegen::cpp::GeneratedModel fp32 = codegen::cpp::generate_cpp(*fp32_graph, fp32_options);
  codegen::cpp::write_sources(fp32, work / "fp32" / "src");
  codegen::cpp::build(fp32, work / "fp32" / "src", work / "fp32", exe_only);

  PrecisionReport report = measure_precision(graph, exe, work / "fp32" / fp32.name, args.precision.calibration_dir,
                                             args.verify.seed, work / "samples");
  report.precision = passes::precision_name(options.precision);
  report.weight_bytes_fp32 = fp32.weights.size();
  report.weight_bytes = model.weights.size();
  report.notes = notes;
  int dense_nhwc = 0, pairs_fit = 0;
  for (const auto& n : graph.nodes())
    if (n->op() == "kiln.QLinearConvNhwc" && ir::nhwc_conv_params(*n).group == 1) {
      ++dense_nhwc;
      pairs_fit += ir::nhwc_conv_pairs_fit_int16(*n) ? 1 : 0;
    }
  if (dense_nhwc > 0)
    report.notes.push_back(fmt::format("{} of {} dense channels-last int8 convolutions have weight pairs that fit int16 "
                                       "(the AVX2 vpmaddubsw tile)", pairs_fit, dense_nhwc));
  if (model.widened_weights > 0)
    report.notes.push_back(fmt::format("{} weights stored as {}, widened to {} bytes of fp32 when the model's context is created",
                                       model.widened_weights, report.precision, model.widened_bytes));
  if (model.bf16_gemm_weights > 0) report.notes.push_back(bf16_gemm_note(model));
  if (args.verbose) print_precision_report(report, stderr);
  if (!args.precision.report_path.empty()) write_precision_report(report, args.precision.report_path);
}

int run_compile(const CompileArgs& args) {
  PhaseTimer timer(args.verbose);
  clean_stale_leftovers(output_dir(args.out_dir));
  std::set<std::string> emit = parse_emit(args.emit);
  if (!args.verify.engine.empty() && !emit.count("exe")) fail("--verify-against needs the executable (--emit exe)");
  if (args.verify.bisect && args.verify.engine.empty()) fail("--bisect needs --verify-against");
  if (args.weights != "embedded" && args.weights != "external")
    fail("--weights {}: expected embedded or external", args.weights);
  check_precision_options(args.precision);
  const codegen::cpp::Target& target = target_of(args);
  const std::string march = codegen::cpp::march_for(target, args.cpu);
  const codegen::cpp::Toolchain toolchain = codegen::cpp::toolchain_for(target);
  // Another architecture's executable does not run here (except under an emulator).
  const bool runs_here = &target == codegen::cpp::host_target();
  if (!runs_here && !args.verify.engine.empty())
    fail("--verify-against runs the executable, which --target {} builds for another machine", target.triple);
  if (!runs_here && !args.precision.report_path.empty())
    fail("--report runs the executable, which --target {} builds for another machine", target.triple);
  LoadOptions load;
  load.dims = parse_dims(args.dims);
  load.pipeline = args.pipeline;
  load.limits = args.limits;
  load.precision = args.precision.precision;
  StaticQuantization int8;  // --precision int8: calibrated once, reused by every later load
  std::vector<std::string> notes;  // what the precision adds to the report
  std::unique_ptr<ir::Graph> graph;
  if (load.precision == passes::Precision::Int8) {
    load.int8 = &int8;
    int8.reduced_range_dense_convs = reduced_weight_range(args.precision, args.cpu);
    graph = load_int8_model(args.model, load, args.precision, timer, notes);
  } else {
    graph = load_model(args.model, load, timer);
  }
  if (!args.precision.calibration_dir.empty()) calibration_samples(args.precision.calibration_dir, *graph);  // checked now, before building

  codegen::cpp::CppOptions options;
  options.name = codegen::cpp::c_identifier(args.name.empty() ? fs::path(args.model).stem().string()
                                                              : args.name);
  options.source_model = fs::path(args.model).filename().string();
  options.external_weights = args.weights == "external";
  options.test_hooks = test_hooks_from_env();
  options.precision = args.precision.precision;
  options.emit = args.emit_options;
  codegen::cpp::GeneratedModel model = timer.phase("codegen", [&] {
    try {
      return codegen::cpp::generate_cpp(*graph, options);
    } catch (const Error& e) {
      fail("{}: {}", args.model, e.what());
    }
  });

  if (args.verbose) print_memory_plan(*graph, options.emit, stderr);
  fs::path out = output_dir(args.out_dir);
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec))
    fail("{}: exists and is not a directory", out.string());
  fs::create_directories(out.parent_path(), ec);
  fs::path tmp = out.parent_path() / fmt::format(".{}.kiln-tmp-{}", out.filename().string(), getpid());
  codegen::cpp::BuildOptions build;
  fs::remove_all(tmp, ec);
  try {
    fs::create_directories(tmp);
    fs::path src = tmp / "src";
    timer.phase("write", [&] { codegen::cpp::write_sources(model, src); });
    build.exe = emit.count("exe") > 0;
    build.lib = emit.count("lib") > 0;
    build.shared = emit.count("shared") > 0;
    build.march = march;
    build.cxx = toolchain.cxx;
    build.ar = toolchain.ar;
    build.triple = std::string(target.triple);
    build.jobs = std::max(1, args.jobs);
    build.log = args.verbose ? &std::cerr : nullptr;
    timer.phase("build", [&] { codegen::cpp::build(model, src, tmp, build); });
    if (build.lib || build.shared) fs::copy_file(src / (model.name + ".h"), tmp / (model.name + ".h"));
    if (options.external_weights)
      fs::copy_file(src / (model.name + ".weights"), tmp / (model.name + ".weights"));
    if (!emit.count("source")) fs::remove_all(src);
    publish(tmp, out);
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  if (args.verbose)
    fmt::print(stderr, "kiln: arena {} bytes (lower bound {}, unplanned {}), weights {} bytes\n",
               model.plan.arena_size, model.plan.lower_bound, model.plan.naive_size,
               model.weights.size());
  if (args.verbose && model.widened_weights > 0)
    fmt::print(stderr, "kiln: {} weights stored as {} ({} bytes once widened to fp32 at context creation)\n",
               model.widened_weights, passes::precision_name(options.precision), model.widened_bytes);
  if (args.verbose && model.bf16_gemm_weights > 0) fmt::print(stderr, "kiln: {}\n", bf16_gemm_note(model));
  if (!args.verify.engine.empty()) timer.phase("verify", [&] { verify(args, load, *graph, options, out, build); });
  const bool lowered = args.precision.precision != passes::Precision::FP32;
  if (args.verbose && lowered && !runs_here)
    fmt::print(stderr, "kiln: no precision report: the {} executable does not run on this machine\n", target.triple);
  else if (!args.precision.report_path.empty() || (args.verbose && lowered))
    timer.phase("report", [&] { report_precision(args, load, *graph, options, model, out, build, notes); });
  return 0;
}

}  // namespace

Command add_compile_command(CLI::App& app) {
  auto args = std::make_shared<CompileArgs>();
  CLI::App* cmd = app.add_subcommand("compile", "compile a model into an executable, libraries and sources");
  cmd->add_option("model", args->model, "the model file (.onnx)")->required();
  cmd->add_option("-o,--output", args->out_dir, "output directory (replaced if it exists)")->required();
  cmd->add_option("--emit", args->emit,
                  "what to write, comma-separated: exe (OUTDIR/NAME), lib (libNAME.a + NAME.h), "
                  "shared (libNAME.so + NAME.h), source (OUTDIR/src with a CMakeLists.txt)")
      ->capture_default_str();
  cmd->add_option("--name", args->name, "name of the executable and prefix of the C API (default: the model file's stem)");
  cmd->add_option("--weights", args->weights, "embedded (linked into the binary) or external (OUTDIR/NAME.weights, memory-mapped)")
      ->capture_default_str();
  cmd->add_option("--dim", args->dims, "give a symbolic dim a value, e.g. --dim batch=1 (repeatable)");
  cmd->add_option("--target", args->target,
                  fmt::format("the machine to build for: {} (default: this machine's); another machine's is built "
                              "with TRIPLE-g++",
                              codegen::cpp::known_triples()));
  cmd->add_option("--cpu", args->cpu,
                  "instruction set of the binary: generic (portable; on x86-64 hot kernels choose AVX2+FMA at "
                  "run time), native (this machine's), x86-64-v2, x86-64-v3 (x86_64-linux-gnu)")
      ->capture_default_str();
  add_emit_options(cmd, args->emit_options);
  cmd->add_option("-j,--jobs", args->jobs, "compiler processes at once")->capture_default_str();
  cmd->add_flag("-v,--verbose", args->verbose, "print each phase's time and the compiler commands");
  cmd->add_option("--verify-against", args->verify.engine,
                  "after compiling, run the executable and ENGINE (onnxruntime) on generated inputs and fail "
                  "naming the first output that disagrees")
      ->check(CLI::IsMember({"onnxruntime"}));
  cmd->add_flag("--bisect", args->verify.bisect,
                "with --verify-against: name the first node whose output disagrees (compares every intermediate value)");
  cmd->add_option("--verify-rtol", args->verify.rtol, "relative tolerance of --verify-against")->capture_default_str();
  cmd->add_option("--verify-atol", args->verify.atol, "absolute tolerance of --verify-against")->capture_default_str();
  cmd->add_option("--python", args->verify.python,
                  "the Python that runs the baseline (default: $KILN_PYTHON, else python3)");
  add_limits_options(cmd, args->limits);
  add_pipeline_options(cmd, args->pipeline);
  add_precision_options(cmd, args->precision);
  return {cmd, [args] { return run_compile(*args); }};
}

}  // namespace kiln::cli
