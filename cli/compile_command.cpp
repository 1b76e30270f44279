// kiln compile MODEL -o OUTDIR: the model as an executable, libraries and their sources.
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.h"
#include "cli/interrupt.h"
#include "cli/limits_options.h"
#include "cli/model_loader.h"
#include "cli/pipeline_options.h"
#include "cli/precision_options.h"
#include "cli/precision_report.h"
#include "cli/progress.h"
#include "cli/static_quantization.h"
#include "cli/test_hooks.h"
#include "cli/verify.h"
#include "codegen/cpp/api_files.h"
#include "codegen/cpp/builder.h"
#include "codegen/cpp/content_hash.h"
#include "codegen/cpp/cpp_backend.h"
#include "codegen/cpp/target.h"
#include "codegen/cuda/cuda_backend.h"
#include "codegen/llvm/llvm_backend.h"
#include "ir/error.h"
#include "ir/ops/channels_last.h"
#include "kiln_commit.h"

namespace kiln::cli {

namespace fs = std::filesystem;

namespace {

struct CompileArgs {
  std::string model;
  std::string params;  // --params FILE.npz (StableHLO)
  TensorFlowSelection tf;  // --signature, --input, --output
  std::string out_dir;
  std::string emit = "exe";  // the weights once: lib, shared and source on request
  std::string name;
  std::string weights = "embedded";
  std::vector<std::string> dims;
  std::vector<std::string> input_shapes;
  std::string target;  // empty: this machine's
  std::string cpu = "generic";
  codegen::cpp::EmitOptions emit_options;  // --conv-algo
  std::string backend = "cpp";  // --backend: cpp or llvm
  std::string cuda_arch = codegen::cuda::kDefaultCudaArchs;  // --cuda-arch, with --target cuda
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
    if (kind != "exe" && kind != "lib" && kind != "shared" && kind != "obj" && kind != "source")
      fail("--emit {}: unknown kind '{}' (expected exe, lib, shared, obj or source)", text, kind);
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

void write_text_file(const fs::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f) fail("{}: cannot write", path.string());
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
  TemporaryDirectory tmp("kiln-report");
  const fs::path work = tmp.path();
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

// The model's name: --name, else the model file's stem, made a C identifier; one that
// would break NAME.h (a C/C++ keyword) is refused before any work is done.
std::string model_name(const CompileArgs& args) {
  const std::string id = codegen::cpp::c_identifier(args.name.empty() ? model_stem(args.model) : args.name);
  if (codegen::cpp::is_reserved_name(id)) {
    if (!args.name.empty())
      fail("--name {}: '{}' is a C/C++ keyword or standard macro and cannot name the API ({}_create, class "
           "kiln_models::{}); choose another name", args.name, id, id, id);
    fail("{}: the model's name '{}' (from the file name) is a C/C++ keyword or standard macro; choose another with --name",
         args.model, id);
  }
  return id;
}

// The folder OUTDIR is written in first, beside it; fails naming OUTDIR (not the temporary
// folder) when it cannot be written.
fs::path make_temporary_output(const fs::path& out) {
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec)) fail("{}: exists and is not a directory", out.string());
  const fs::path parent = out.parent_path();
  fs::create_directories(parent, ec);
  if (std::error_code e; !fs::is_directory(parent, e))
    fail("{}: cannot create the output directory: {}", out.string(),
         fs::exists(parent, e) ? parent.string() + " is not a directory" : ec.message());
  fs::path tmp = parent / fmt::format(".{}.kiln-tmp-{}", out.filename().string(), getpid());
  fs::remove_all(tmp, ec);
  if (mkdir(tmp.c_str(), 0777) != 0)
    fail("{}: cannot write the output directory: {} (in {})", out.string(), std::strerror(errno), parent.string());
  return tmp;
}

// What the progress line says for each phase (cli/phase_timer.h names them).
std::string phase_text(const std::string& phase, const CompileArgs& args) {
  if (phase == "import") {
    std::error_code ec;
    const auto bytes = fs::file_size(args.model, ec);
    return ec ? fmt::format("importing {}", args.model)
              : fmt::format("importing {} ({:.1f} MB)", args.model, static_cast<double>(bytes) / 1e6);
  }
  if (phase == "optimize") return "optimizing (passes)";
  if (phase == "calibrate") return "calibrating int8 ranges";
  if (phase == "quantize") return "quantizing to int8";
  if (phase == "max-error") return "measuring the int8 error (--max-error)";
  if (phase == "codegen") return "generating C++";
  if (phase == "write") return "writing the sources";
  if (phase == "build") return "building";
  if (phase == "verify") return "verifying against " + args.verify.engine;
  if (phase == "report") return "measuring the precision report";
  return phase;
}

// "kiln: wrote out/ in 3.1 s: mlp (1.9 MB), libmlp.a (2.0 MB), mlp.h, mlp.pc, src/"
std::string summary(const fs::path& out, double seconds) {
  std::vector<std::string> parts;
  std::error_code ec;
  std::vector<fs::directory_entry> entries;
  for (const fs::directory_entry& e : fs::directory_iterator(out, ec)) entries.push_back(e);
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.path() < b.path(); });
  for (const fs::directory_entry& e : entries) {
    const std::string name = e.path().filename().string();
    if (e.is_directory(ec)) {
      parts.push_back(name + "/");
      continue;
    }
    const auto bytes = e.file_size(ec);
    parts.push_back(ec || bytes < 100000 ? name : fmt::format("{} ({:.1f} MB)", name, static_cast<double>(bytes) / 1e6));
  }
  return fmt::format("kiln: wrote {} in {:.1f} s: {}", out.string(), seconds, fmt::join(parts, ", "));
}

// --target, else this machine's.
// --target cuda: NVIDIA GPUs, driven from this machine's CPU (whose code the host part is).
bool is_cuda(const CompileArgs& args) { return args.target == "cuda"; }

const codegen::cpp::Target& target_of(const CompileArgs& args) {
  if (!args.target.empty() && !is_cuda(args)) return codegen::cpp::find_target(args.target);
  if (const codegen::cpp::Target* host = codegen::cpp::host_target()) return *host;
  fail("this machine's architecture is not one kiln knows: give --target ({})", codegen::cpp::known_triples());
}

// The builder's options for --emit, --target, --cpu, -j and -v.
void set_build_options(const CompileArgs& args, const std::set<std::string>& emit, codegen::cpp::BuildOptions& build,
                       Progress& progress) {
  build.exe = emit.count("exe") > 0;
  build.lib = emit.count("lib") > 0;
  build.shared = emit.count("shared") > 0;
  build.obj = emit.count("obj") > 0;
  const codegen::cpp::Target& target = target_of(args);
  const codegen::cpp::Toolchain toolchain = codegen::cpp::toolchain_for(target);
  build.march = codegen::cpp::march_for(target, args.cpu);
  build.cxx = toolchain.cxx;
  build.ar = toolchain.ar;
  build.triple = std::string(target.triple);
  build.jobs = std::max(1, args.jobs);
  build.log = args.verbose ? &std::cerr : nullptr;
  if (is_cuda(args)) {
    build.cuda_archs = codegen::cuda::parse_cuda_archs(args.cuda_arch);
    if (build.exe || build.lib || build.shared || build.obj) build.cuda_home = codegen::cuda::cuda_home();
  }
  if (progress.enabled()) {
    // Each of the builder's steps (runtime, model, archive, link) with its own clock; "K/N
    // units" updates the step.
    build.progress = [&progress, step = std::string()](const std::string& text) mutable {
      const std::string label = text.substr(0, text.find(':'));
      if (label == step) {
        progress.update("kiln: " + text);
      } else {
        step = label;
        progress.step("kiln: " + text);
      }
    };
  }
}

// Builds what --emit asks into `tmp`, which becomes OUTDIR.
void build_outputs(const CompileArgs& args, const std::set<std::string>& emit, const codegen::cpp::GeneratedModel& model,
                   const codegen::cpp::CppOptions& options, const fs::path& tmp, codegen::cpp::BuildOptions& build,
                   PhaseTimer& timer, Progress& progress) {
  fs::path src = tmp / "src";
  timer.phase("write", [&] { codegen::cpp::write_sources(model, src); });
  set_build_options(args, emit, build, progress);
  timer.phase("build", [&] { codegen::cpp::build(model, src, tmp, build); });
  if (build.lib || build.shared || build.obj) fs::copy_file(src / (model.name + ".h"), tmp / (model.name + ".h"));
  if (build.lib || build.shared)
    write_text_file(tmp / (model.name + ".pc"), codegen::cpp::pkg_config_file(options, build.shared));
  // The weights once: the sources' copy moves out unless the sources are kept.
  const bool keep_source = emit.count("source") > 0;
  const fs::path weights = src / (model.name + ".weights");
  if (options.external_weights) {
    if (keep_source)
      fs::copy_file(weights, tmp / weights.filename());
    else
      fs::rename(weights, tmp / weights.filename());
  }
  if (!keep_source) fs::remove_all(src);
}

// --backend llvm: the model lowered to LLVM IR and written as an object in process
// (codegen/llvm), then archived or linked with the cached runtime into `tmp`.
void compile_with_llvm(const CompileArgs& args, const std::set<std::string>& emit, const ir::Graph& graph,
                       const codegen::cpp::CppOptions& options, const fs::path& tmp, PhaseTimer& timer,
                       Progress& progress) {
  if (!codegen::llvm_ir::available()) fail("this kiln was built without LLVM: --backend llvm needs llvm-19-dev when kiln is built");
  for (const std::string& kind : emit)
    if (kind != "obj" && kind != "exe" && kind != "lib")
      fail("--backend llvm writes exe, lib and obj; --emit {} needs the C++ backend (--backend cpp)", kind);
  if (options.precision != passes::Precision::FP32)
    fail("--backend llvm compiles fp32 models; --precision {} needs the C++ backend (--backend cpp)",
         passes::precision_name(options.precision));
  if (!options.test_hooks.perturb_node.empty() || !options.test_hooks.delay_node.empty())
    fail("the KILN_TEST_* hooks need the C++ backend (--backend cpp)");
  if (std::vector<std::string> problems = codegen::llvm_ir::unsupported(graph); !problems.empty())
    fail("{}: --backend llvm cannot compile this model (--backend cpp can):\n  {}", args.model,
         fmt::join(problems, "\n  "));
  codegen::cpp::BuildOptions build;
  set_build_options(args, emit, build, progress);
  codegen::llvm_ir::LlvmOptions lopts;
  lopts.name = options.name;
  lopts.triple = build.triple;
  lopts.cpu = args.cpu;
  lopts.external_weights = options.external_weights;
  lopts.emit = options.emit;
  lopts.build_info = fmt::format("compiled by kiln {} from {} through LLVM, precision fp32, weights {}",
                                 KILN_VERSION_STRING, options.source_model, args.weights);
  const fs::path work = tmp / ".llvm";
  fs::create_directories(work);
  const fs::path object = (build.obj ? tmp : work) / (options.name + ".o");
  codegen::llvm_ir::LlvmModel model = timer.phase("codegen", [&] {
    try {
      return codegen::llvm_ir::write_object(graph, lopts, object);
    } catch (const Error& e) {
      fail("{}: {}", args.model, e.what());
    }
  });
  if (build.exe) codegen::llvm_ir::write_main_object(lopts, work / "main.o");
  timer.phase("build", [&] { codegen::cpp::build_from_object(options.name, object, work / "main.o", tmp, build); });
  if (build.lib || build.obj) {
    // The header's hash: of the object (the code, and the weights unless they are external), the
    // external weights, and what built it.
    std::ifstream in(object, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    uint64_t h = codegen::content_hash(options.build_identity);
    h = codegen::content_hash(bytes, h);
    if (options.external_weights) h = codegen::content_hash(model.weights, h);
    write_text_file(tmp / (options.name + ".h"), codegen::cpp::api_header(graph, options, fmt::format("{:016x}", h)));
  }
  if (build.lib) write_text_file(tmp / (options.name + ".pc"), codegen::cpp::pkg_config_file(options, false));
  if (options.external_weights) {
    std::ofstream w(tmp / (options.name + ".weights"), std::ios::binary);
    w.write(model.weights.data(), static_cast<std::streamsize>(model.weights.size()));
    if (!w) fail("{}: cannot write the weights", (tmp / (options.name + ".weights")).string());
  }
  fs::remove_all(work);
  if (args.verbose)
    fmt::print(stderr, "kiln: arena {} bytes (lower bound {}, unplanned {}), weights {} bytes, {} kernel calls\n",
               model.plan.arena_size, model.plan.lower_bound, model.plan.naive_size, model.weights.size(), model.nodes);
}

int run_compile(const CompileArgs& args) {
  const auto started = std::chrono::steady_clock::now();
  PhaseTimer timer(args.verbose);
  Progress progress(args.verbose ? Progress::Mode::Off : Progress::terminal_or(Progress::Mode::Off));
  timer.on_phase([&](const std::string& phase) { progress.step("kiln: " + phase_text(phase, args)); });
  std::set<std::string> emit = parse_emit(args.emit);
  if (!args.verify.engine.empty() && !emit.count("exe")) fail("--verify-against needs the executable (--emit exe)");
  if (!args.verify.engine.empty() && args.backend == "llvm") fail("--verify-against builds through the C++ backend (--backend cpp)");
  if (args.verify.bisect && args.verify.engine.empty()) fail("--bisect needs --verify-against");
  if (args.weights != "embedded" && args.weights != "external")
    fail("--weights {}: expected embedded or external", args.weights);
  if (is_cuda(args)) {
    if (args.backend != "cpp") fail("--target cuda writes CUDA C++ (--backend cpp)");
    if (!args.verify.engine.empty()) fail("--verify-against runs the executable on the CPU's inputs; with --target cuda compare on a GPU machine (scripts/gpu_check.sh)");
    if (args.precision.precision == passes::Precision::Int8) fail("--target cuda: --precision int8 is not supported yet (fp32, fp16, bf16)");
    codegen::cuda::parse_cuda_archs(args.cuda_arch);  // a bad --cuda-arch fails before the work
  }
  check_precision_options(args.precision);
  const codegen::cpp::Target& target = target_of(args);
  codegen::cpp::march_for(target, args.cpu);  // a --cpu the target lacks fails before the work
  // Another architecture's executable does not run here (except under an emulator).
  // The CUDA target's executable needs a GPU, which the compiling machine need not have.
  const bool runs_here = &target == codegen::cpp::host_target() && !is_cuda(args);
  if (!runs_here && !args.verify.engine.empty())
    fail("--verify-against runs the executable, which --target {} builds for another machine", target.triple);
  if (!runs_here && !args.precision.report_path.empty())
    fail("--report runs the executable, which --target {} builds for another machine", target.triple);
  codegen::cpp::CppOptions options;
  options.name = model_name(args);
  options.build_identity = fmt::format("kiln {} (commit {}), target {}, cpu {}", KILN_VERSION_STRING, KILN_COMMIT,
                                       target.triple, args.cpu);
  options.source_model = fs::path(args.model).filename().string();
  options.external_weights = args.weights == "external";
  options.test_hooks = test_hooks_from_env();
  options.precision = args.precision.precision;
  options.emit = args.emit_options;
  if (is_cuda(args)) {
    options.link_libs = "-lcublas -lcudart";
    try {
      const std::string lib = (fs::path(codegen::cuda::cuda_home()) / "lib64").string();
      options.link_libs = fmt::format("-L{0} -Wl,-rpath,{0} {1}", lib, options.link_libs);
    } catch (const Error&) {
      // No toolkit here: fine for --emit source; a build fails later, naming what is missing.
    }
  }

  // OUTDIR's temporary folder first: an unwritable OUTDIR fails before the work, and an
  // interrupted compile removes it (cli/interrupt.h).
  const fs::path out = output_dir(args.out_dir);
  clean_stale_leftovers(out);
  const fs::path tmp = make_temporary_output(out);
  RemovedIfInterrupted tmp_guard(tmp);
  codegen::cpp::BuildOptions build;
  LoadOptions load;
  std::unique_ptr<ir::Graph> graph;
  std::vector<std::string> notes;  // what the precision adds to the report
  StaticQuantization int8;  // --precision int8: calibrated once, reused by every later load
  codegen::cpp::GeneratedModel model;
  try {
    load.dims = parse_dims(args.dims, &load.dim_ranges);
    load.allow_dim_ranges = true;
    load.input_shapes = args.input_shapes;
    load.params = args.params;
    load.tf = args.tf;
    load.pipeline = args.pipeline;
    if (is_cuda(args))
      for (const std::string& p : codegen::cuda::cpu_only_passes()) load.pipeline.disabled.insert(p);
    load.limits = args.limits;
    load.precision = args.precision.precision;
    if (load.precision == passes::Precision::Int8) {
      load.int8 = &int8;
      int8.reduced_range_dense_convs = reduced_weight_range(args.precision, args.cpu);
      graph = load_int8_model(args.model, load, args.precision, timer, notes);
    } else {
      graph = load_model(args.model, load, timer);
    }
    if (!args.precision.calibration_dir.empty()) calibration_samples(args.precision.calibration_dir, *graph);  // checked now, before building

    if (args.backend == "llvm") {
      try {
        compile_with_llvm(args, emit, *graph, options, tmp, timer, progress);
        publish(tmp, out);
      } catch (const fs::filesystem_error& e) {
        fail("{}: cannot write the output: {}", out.string(), e.code().message());
      }
      progress.clear();
      fmt::print(stderr, "{}\n", summary(out, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()));
      return 0;
    }
    codegen::cuda::CudaOptions cuda;
    cuda.precision = options.precision;
    if (is_cuda(args) && args.verbose) {
      const codegen::cuda::Placement where = codegen::cuda::placement(*graph, cuda);
      fmt::print(stderr, "kiln: {} nodes on the GPU, {} on the host\n", where.device, where.host);
      for (const std::string& line : where.lines) fmt::print(stderr, "kiln:   {}\n", line);
    }
    model = timer.phase("codegen", [&] {
      try {
        if (is_cuda(args)) return codegen::cuda::generate_cuda(*graph, options, cuda);
        return codegen::cpp::generate_cpp(*graph, options);
      } catch (const Error& e) {
        fail("{}: {}", args.model, e.what());
      }
    });
    if (args.verbose) print_memory_plan(*graph, options.emit, stderr);
    try {
      build_outputs(args, emit, model, options, tmp, build, timer, progress);
      publish(tmp, out);
    } catch (const fs::filesystem_error& e) {  // a full disk, say: named by OUTDIR, not the temporary folder
      fail("{}: cannot write the output: {}", out.string(), e.code().message());
    }
  } catch (...) {
    std::error_code ec;
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
    fmt::print(stderr, "kiln: no precision report: the {} executable does not run on this machine\n",
               is_cuda(args) ? std::string("CUDA") : std::string(target.triple));
  else if (!args.precision.report_path.empty() || (args.verbose && lowered))
    timer.phase("report", [&] { report_precision(args, load, *graph, options, model, out, build, notes); });
  progress.clear();
  fmt::print(stderr, "{}\n", summary(out, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()));
  return 0;
}

}  // namespace

Command add_compile_command(CLI::App& app) {
  auto args = std::make_shared<CompileArgs>();
  CLI::App* cmd = app.add_subcommand("compile", "compile a model into an executable, libraries and sources");
  cmd->add_option("model", args->model, "the model file (.onnx, a PyTorch .pt/.pt2 archive, or StableHLO .mlir text)")->required();
  cmd->add_option("-o,--output", args->out_dir, "output directory (replaced if it exists)")->required();
  cmd->add_option("--emit", args->emit,
                  "what to write, comma-separated: exe (OUTDIR/NAME), lib (libNAME.a + NAME.h), "
                  "shared (libNAME.so + NAME.h), obj (NAME.o, the model's code and weights as one relocatable "
                  "object, + libkiln_rt.a, the target's runtime, + NAME.h), source (OUTDIR/src with a CMakeLists.txt)")
      ->capture_default_str();
  cmd->add_option("--name", args->name, "name of the executable and prefix of the C API (default: the model file's stem)");
  cmd->add_option("--weights", args->weights, "embedded (linked into the binary) or external (OUTDIR/NAME.weights, memory-mapped)")
      ->capture_default_str();
  add_tensorflow_options(cmd, args->tf);
  cmd->add_option("--params", args->params,
                  "StableHLO (.mlir) models: an .npz with values for arguments of @main, by index (arg0, arg1, ...) or by the name JAX gives them with as_text(debug_info=True); the other arguments are the inputs");
  cmd->add_option("--input-shape", args->input_shapes,
                  "an input's shape, [NAME=]D0,D1,...[:DTYPE] (repeatable; unnamed ones in input order; needed for "
                  "TorchScript archives, which record none)")->allow_extra_args(false);
  cmd->add_option("--dim", args->dims,
                  "give a symbolic dim a value, --dim batch=1, or bounds the compiled code accepts at run time, "
                  "--dim seq=1..256 (repeatable)");
  cmd->add_option("--target", args->target,
                  fmt::format("the machine to build for: {} (default: this machine's); another machine's is built "
                              "with TRIPLE-g++; or cuda: NVIDIA GPUs, through nvcc and cuBLAS (CUDA toolkit 12 or later)",
                              codegen::cpp::known_triples()));
  cmd->add_option("--cuda-arch", args->cuda_arch,
                  "with --target cuda: the GPU architectures to build for, compute capabilities comma-separated "
                  "(SASS for each, PTX of the last for newer GPUs)")
      ->capture_default_str();
  cmd->add_option("--cpu", args->cpu,
                  "instruction set of the binary: generic (portable; on x86-64 hot kernels choose AVX2+FMA at "
                  "run time), native (this machine's), x86-64-v2, x86-64-v3 (x86_64-linux-gnu)")
      ->capture_default_str();
  add_emit_options(cmd, args->emit_options);
  cmd->add_option("--backend", args->backend,
                  "cpp (C++ source compiled by the target's C++ compiler) or llvm (LLVM IR, an object written "
                  "in process: exe, lib and obj of fp32 models with static shapes)")
      ->check(CLI::IsMember({"cpp", "llvm"}))
      ->capture_default_str();
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
