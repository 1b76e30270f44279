#include "cli/pipeline_options.h"

#include <iostream>

#include <fmt/format.h>

#include "cli/model_loader.h"
#include "codegen/cpp/cpp_backend.h"
#include "ir/error.h"

namespace kiln::cli {

namespace {

std::string check_pass(const std::string& name) {
  if (passes::find_pass(name)) return "";
  std::vector<std::string> known;
  for (const passes::PassInfo& p : passes::all_passes()) known.push_back(p.name);
  return fmt::format("unknown pass '{}' (passes: {})", name, fmt::join(known, ", "));
}

}  // namespace

void add_pipeline_options(CLI::App* cmd, passes::PipelineOptions& options) {
  options.log = &std::cerr;
  auto* o = &options;
  const CLI::Validator pass_name(check_pass, "PASS", "a pass name");
  cmd->add_option("-O", options.opt_level,
                  "optimization level: 0 (shapes, constants, dead code), 1 (+ simplification), 2 (+ fusion)")
      ->check(CLI::Range(0, 2))
      ->capture_default_str();
  cmd->add_option_function<std::vector<std::string>>(
         "--print-ir-after", [o](const std::vector<std::string>& v) { o->print_after.insert(v.begin(), v.end()); },
         "print the IR to stderr after this pass (repeatable)")
      ->check(pass_name);
  cmd->add_flag_callback("--print-ir-after-all", [o] { o->print_after.insert("all"); },
                         "print the IR to stderr after every pass");
  cmd->add_option_function<std::vector<std::string>>(
         "--disable-pass", [o](const std::vector<std::string>& v) { o->disabled.insert(v.begin(), v.end()); },
         "skip this pass (repeatable)")
      ->check(pass_name);
  cmd->add_flag("--verify-each", options.verify_each, "verify the graph after every pass (always in debug builds)");
}

void add_emit_options(CLI::App* cmd, codegen::cpp::EmitOptions& options) {
  cmd->add_option_function<std::string>(
         "--conv-algo",
         [&options](const std::string& text) {
           std::optional<codegen::cpp::ConvAlgo> algo = codegen::cpp::parse_conv_algo(text);
           if (!algo)
             throw CLI::ValidationError("--conv-algo", fmt::format("expected {}, got '{}'", codegen::cpp::kConvAlgoNames, text));
           options.conv_algo = *algo;
         },
         "how 3x3 stride-1 convolutions with constant weights run: auto (default: Winograd where a cost model "
         "says it pays, else im2col + GEMM), im2col, winograd (F(4x4,3x3)), winograd4 (the same) or winograd2 "
         "(F(2x2,3x3)); the last four force it wherever it applies, for comparison")
      ->type_name("ALGO");
}

void print_memory_plan(const ir::Graph& graph, const codegen::cpp::EmitOptions& options, std::FILE* out) {
  codegen::cpp::PlanReport r = codegen::cpp::plan_report(graph, options);
  const passes::MemoryPlan& m = r.memory;
  fmt::print(out, "memory plan: arena {} bytes, lower bound {} ({:.3f}x), naive sum {} ({:.2f}x)\n", m.arena_size,
             m.lower_bound, m.lower_bound ? static_cast<double>(m.arena_size) / static_cast<double>(m.lower_bound) : 1.0,
             m.naive_size, m.arena_size ? static_cast<double>(m.naive_size) / static_cast<double>(m.arena_size) : 1.0);
  fmt::print(out, "  {} arena values, {} written in place, {} views\n", r.values, r.in_place, r.views);
  for (const auto& [name, bytes] : r.largest) fmt::print(out, "  {:>12} bytes  {}\n", bytes, name);
}

int print_plan(const std::string& model, const std::vector<std::string>& dims,
               const passes::PipelineOptions& options, const codegen::cpp::EmitOptions& emit) {
  PhaseTimer timer(false);
  LoadOptions load;
  load.dims = parse_dims(dims);
  load.optimize = false;  // imported and typed only: the pipeline runs below, stage by stage
  std::unique_ptr<ir::Graph> graph = load_model(model, load, timer);
  fmt::print("before: {}\n", passes::node_count_summary(*graph));
  passes::PipelineOptions p = options;
  p.stats = true;
  p.log = &std::cout;
  try {
    passes::run_pipeline(*graph, passes::pipeline_for_level(options.opt_level), p);
    std::cout.flush();
    print_memory_plan(*graph, emit, stdout);
  } catch (const Error& e) {
    fail("{}: {}", model, e.what());
  }
  return 0;
}

}  // namespace kiln::cli
