#include "cli/verify.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>

#include "cli/bench_adapters.h"
#include "cli/bench_tensors.h"
#include "cli/child_process.h"
#include "cli/interrupt.h"
#include "ir/error.h"
#include "kiln/rt/sanitize.h"

namespace kiln::cli {

namespace fs = std::filesystem;

namespace {

struct Disagreement {
  int64_t index = 0;
  double value = 0, reference = 0, max_abs = 0;
};

// Whether kiln's `value` agrees with the baseline's `reference`; if not, where and how much.
bool agrees(const rt::HostTensor& value, const rt::HostTensor& reference, const VerifyOptions& o, Disagreement& d) {
  int64_t bad = 0;
  if (value.shape == reference.shape && within_tolerance(value, reference, o.rtol, o.atol, bad)) return true;
  d.index = bad;
  if (value.shape == reference.shape) {
    d.value = element_at(value, bad);
    d.reference = element_at(reference, bad);
    d.max_abs = compare_tensors("", value, reference).max_abs_error;
  }
  return false;
}

std::string describe(const Disagreement& d, const VerifyOptions& o) {
  return fmt::format("max abs error {:.3g}; first beyond tolerance (atol {:g} + rtol {:g}) at flat index {}: kiln {:.7g}, "
                     "{} {:.7g}",
                     d.max_abs, o.atol, o.rtol, d.index, d.value, o.engine, d.reference);
}

// Runs the baseline adapter once; `extra` are its options (--outputs DIR or --dump-all DIR).
void run_baseline(const std::string& model, const std::vector<fs::path>& inputs, const VerifyOptions& o,
                  const fs::path& work, const std::vector<std::string>& extra) {
  const std::string python = python_interpreter(o.python);
  fs::path adapter = write_adapter(work / "adapters", o.engine);
  std::string reason;
  if (probe_engine(python, adapter, work / "probe.log", reason).empty())
    fail("--verify-against {}: {} (python: {}; choose one with --python or KILN_PYTHON)", o.engine, reason, python);
  std::vector<std::string> argv = {python, adapter.string(), "--model", model};
  argv.insert(argv.end(), extra.begin(), extra.end());
  for (const fs::path& p : inputs) argv.push_back(p.string());
  if (run_to_completion(argv, work / "baseline.log") != 0)
    fail("--verify-against {}: running the model failed:\n{}", o.engine, tail_of(work / "baseline.log"));
}

void run_exe(const fs::path& exe, const std::vector<fs::path>& inputs, const fs::path& out, const fs::path& log) {
  std::vector<std::string> argv = {exe.string(), "-o", out.string()};
  for (const fs::path& p : inputs) argv.push_back(p.string());
  if (run_to_completion(argv, log) != 0) fail("running the compiled model failed:\n{}", tail_of(log));
}

// The baseline's intermediate values: name -> file (from --dump-all).
std::map<std::string, fs::path> dumped_values(const fs::path& dir) {
  std::map<std::string, fs::path> values;
  std::ifstream index(dir / "values.txt");
  size_t k = 0;
  for (std::string name; std::getline(index, name); ++k) values[name] = dir / fmt::format("value_{}.npy", k);
  return values;
}

// Names the first node (in run order) whose output disagrees with the same-named value of
// the baseline, comparing every intermediate value the two share.
[[noreturn]] void bisect(const std::string& model, const ir::Graph& graph, const std::vector<fs::path>& inputs,
                         const VerifyOptions& o, const fs::path& work, const BuildProbeExe& build_probe,
                         const std::string& output_failure) {
  fmt::print(stderr, "kiln: verify: bisecting: compiling with every intermediate value as an output\n");
  fs::path probe = build_probe(work / "probe");
  run_exe(probe, inputs, work / "kiln-values", work / "probe-run.log");
  run_baseline(model, inputs, o, work, {"--dump-all", (work / "baseline-values").string()});
  std::map<std::string, fs::path> reference = dumped_values(work / "baseline-values");
  size_t compared = 0;
  std::set<const ir::Value*> agreeing;
  for (const auto& n : graph.nodes()) {
    for (const ir::Value* v : n->outputs()) {
      if (!v) continue;
      fs::path mine = work / "kiln-values" / (rt::sanitize_file_name(v->name()) + ".npy");
      auto theirs = reference.find(v->name());
      if (theirs == reference.end() || !fs::exists(mine)) continue;
      ++compared;
      Disagreement d;
      if (agrees(read_tensor(mine), read_tensor(theirs->second), o, d)) {
        agreeing.insert(v);
        continue;
      }
      std::vector<std::string> inputs_state;
      for (const ir::Value* in : n->inputs()) {
        if (!in) continue;
        const char* state = in->is_constant() ? "is a constant" : !in->producer() ? "is a model input"
                            : agreeing.count(in)                 ? "agrees"
                                                                 : "was not compared";
        inputs_state.push_back(fmt::format("'{}' {}", in->name(), state));
      }
      fail("--verify-against {} --bisect: the first node whose output disagrees is '{}' ({}): its output '{}' has {} "
           "(inputs: {}; {} values compared)\n  the model's outputs: {}",
           o.engine, n->name(), n->op(), v->name(), describe(d, o), fmt::join(inputs_state, ", "), compared, output_failure);
    }
  }
  fail("--verify-against {} --bisect: no intermediate value kiln shares with {} disagrees ({} compared), yet {}",
       o.engine, o.engine, compared, output_failure);
}

}  // namespace

void verify_compiled(const std::string& model, const ir::Graph& graph, const fs::path& exe, const VerifyOptions& o,
                     const BuildProbeExe& build_probe) {
  if (o.engine != "onnxruntime") fail("--verify-against {}: only onnxruntime is supported (ONNX models)", o.engine);
  TemporaryDirectory tmp("kiln-verify");
  if (std::getenv("KILN_KEEP_VERIFY")) tmp.keep();
  const fs::path work = tmp.path();
  std::vector<TensorSpec> outputs = tensor_specs(graph.outputs());
  std::vector<fs::path> inputs = prepare_inputs(tensor_specs(graph.inputs()), "", o.seed, work / "inputs");
  run_exe(exe, inputs, work / "kiln", work / "kiln-run.log");
  run_baseline(model, inputs, o, work, {"--outputs", (work / "baseline").string()});
  for (size_t k = 0; k < outputs.size(); ++k) {
    rt::HostTensor mine = read_tensor(work / "kiln" / (rt::sanitize_file_name(outputs[k].name) + ".npy"));
    rt::HostTensor theirs = read_tensor(work / "baseline" / fmt::format("output_{}.npy", k));
    Disagreement d;
    if (agrees(mine, theirs, o, d)) continue;
    std::string failure = fmt::format("output '{}' disagrees with {}: {}", outputs[k].name, o.engine,
                                      mine.shape == theirs.shape ? describe(d, o) : "its shape differs");
    if (o.bisect) bisect(model, graph, inputs, o, work, build_probe, failure);
    fail("--verify-against {}: {} (add --bisect to find the first node that disagrees)", o.engine, failure);
  }
  fmt::print(stderr, "kiln: verify: all {} outputs agree with {} (atol {:g} + rtol {:g}, seed {})\n", outputs.size(),
             o.engine, o.atol, o.rtol, o.seed);
}

void expose_intermediates(ir::Graph& graph) {
  std::set<std::string> files;
  std::set<const ir::Value*> outputs(graph.outputs().begin(), graph.outputs().end());
  for (const ir::Value* v : graph.outputs()) files.insert(rt::sanitize_file_name(v->name()));
  for (const auto& n : graph.nodes())
    for (ir::Value* v : n->outputs()) {
      if (!v || outputs.count(v) || !v->has_type() || !v->shape().is_static()) continue;
      if (!files.insert(rt::sanitize_file_name(v->name())).second) continue;
      graph.outputs().push_back(v);
      outputs.insert(v);
    }
}

}  // namespace kiln::cli
