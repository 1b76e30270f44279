#include "cli/precision_report.h"

#include <algorithm>
#include <cmath>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/bench_tensors.h"
#include "cli/child_process.h"
#include "ir/error.h"
#include "kiln/rt/sanitize.h"
#include "kiln/rt/trace.h"

namespace kiln::cli {

namespace fs = std::filesystem;

namespace {

// Sums over all samples of one output.
struct Tally {
  OutputError error;
  double sum_abs = 0;
  int64_t rows = 0, same_top1 = 0;
};

void run_model(const fs::path& exe, const std::vector<fs::path>& inputs, const fs::path& out, const fs::path& log) {
  std::vector<std::string> argv = {exe.string(), "-o", out.string()};
  for (const fs::path& p : inputs) argv.push_back(p.string());
  if (run_to_completion(argv, log) != 0) fail("precision report: running {} failed:\n{}", exe.string(), tail_of(log));
}

void add_sample(Tally& t, const rt::HostTensor& value, const rt::HostTensor& fp32) {
  Agreement a = compare_tensors(t.error.name, value, fp32);
  if (!a.problem.empty()) {
    t.error.problem = a.problem;
    return;
  }
  for (int64_t i = 0; i < a.elements; ++i) {
    const double v = element_at(value, i), r = element_at(fp32, i);
    if (std::isnan(v) && std::isnan(r)) continue;
    t.sum_abs += std::isnan(v) || std::isnan(r) ? INFINITY : std::fabs(v - r);
    if (std::isfinite(r)) t.error.max_fp32 = std::max(t.error.max_fp32, std::fabs(r));
  }
  t.error.max_abs = std::max(t.error.max_abs, a.max_abs_error);
  t.error.elements += a.elements;
  if (a.top1_agreement) {
    const int64_t rows = fp32.shape[0];
    t.rows += rows;
    t.same_top1 += static_cast<int64_t>(std::llround(*a.top1_agreement * static_cast<double>(rows)));
  }
}

std::string number(double v) { return std::isfinite(v) ? fmt::format("{:.6g}", v) : "null"; }

}  // namespace

std::vector<fs::path> calibration_samples(const std::string& dir, const ir::Graph& graph) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) fail("--calibration {}: not a directory", dir);
  std::vector<fs::path> samples;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec))
    if (e.is_directory(ec)) samples.push_back(e.path());
  if (ec) fail("--calibration {}: cannot read it: {}", dir, ec.message());
  std::sort(samples.begin(), samples.end());
  if (samples.empty())
    fail("--calibration {}: no samples (expected one sub-directory per sample, each with <input name>.npy)", dir);
  std::vector<TensorSpec> specs = tensor_specs(graph.inputs());
  for (const fs::path& s : samples)
    for (const TensorSpec& spec : specs) {
      fs::path file = s / (rt::sanitize_file_name(spec.name) + ".npy");
      if (!fs::is_regular_file(file, ec))
        fail("--calibration {}: sample {} has no {} for input '{}'", dir, s.filename().string(),
             file.filename().string(), spec.name);
      rt::HostTensor t;
      std::string error;
      if (!rt::read_npy(file.string(), t, error)) fail("--calibration {}: {}", dir, error);
      if (t.dtype != static_cast<kiln_dtype>(spec.dtype) || t.shape != spec.dims)
        fail("--calibration {}: {} is {} [{}], input '{}' is {} [{}]", dir, file.string(), rt::dtype_name(t.dtype),
             fmt::join(t.shape, ", "), spec.name, ir::dtype_name(spec.dtype), fmt::join(spec.dims, ", "));
    }
  return samples;
}

PrecisionReport measure_precision(const ir::Graph& graph, const fs::path& exe, const fs::path& fp32_exe,
                                  const std::string& calibration_dir, uint64_t seed, const fs::path& work) {
  PrecisionReport report;
  std::vector<TensorSpec> inputs = tensor_specs(graph.inputs());
  std::vector<fs::path> samples;
  if (calibration_dir.empty()) {
    samples.emplace_back();  // one generated sample
    report.inputs = fmt::format("generated inputs (seed {}, floats uniform in [-1, 1))", seed);
  } else {
    samples = calibration_samples(calibration_dir, graph);
    report.inputs = fmt::format("calibration samples in {}", calibration_dir);
  }
  std::vector<Tally> tallies;
  for (const ir::Value* v : graph.outputs()) {
    tallies.emplace_back();
    tallies.back().error.name = v->name();
  }
  for (size_t k = 0; k < samples.size(); ++k) {
    const fs::path dir = work / fmt::format("sample_{}", k);
    std::vector<fs::path> files = prepare_inputs(inputs, samples[k].string(), seed, dir / "inputs");
    run_model(exe, files, dir / "value", dir / "run.log");
    run_model(fp32_exe, files, dir / "fp32", dir / "run-fp32.log");
    for (Tally& t : tallies) {
      const std::string file = rt::sanitize_file_name(t.error.name) + ".npy";
      add_sample(t, read_tensor(dir / "value" / file), read_tensor(dir / "fp32" / file));
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  report.samples = samples.size();
  for (Tally& t : tallies) {
    if (t.error.elements > 0) t.error.mean_abs = t.sum_abs / static_cast<double>(t.error.elements);
    if (t.rows > 0) t.error.top1_agreement = static_cast<double>(t.same_top1) / static_cast<double>(t.rows);
    report.outputs.push_back(t.error);
  }
  return report;
}

void print_precision_report(const PrecisionReport& r, std::FILE* out) {
  const double ratio = r.weight_bytes_fp32 ? static_cast<double>(r.weight_bytes) / static_cast<double>(r.weight_bytes_fp32) : 1.0;
  fmt::print(out, "precision {}: weights {} bytes (fp32: {}, {:.3f}x); error against fp32 on {} sample{} ({}):\n",
             r.precision, r.weight_bytes, r.weight_bytes_fp32, ratio, r.samples, r.samples == 1 ? "" : "s", r.inputs);
  for (const OutputError& e : r.outputs) {
    if (!e.problem.empty()) {
      fmt::print(out, "  {}: {}\n", e.name, e.problem);
      continue;
    }
    std::string top1 = e.top1_agreement ? fmt::format(", top-1 agreement {:.2f}%", *e.top1_agreement * 100) : "";
    fmt::print(out, "  {}: max abs {:.3g}, mean abs {:.3g} (largest |fp32| {:.3g}){}\n", e.name, e.max_abs,
               e.mean_abs, e.max_fp32, top1);
  }
  for (const std::string& note : r.notes) fmt::print(out, "  {}\n", note);
}

void write_precision_report(const PrecisionReport& r, const std::string& path) {
  using rt::json_string;
  std::string s = fmt::format(
      "{{\n  \"precision\": {},\n  \"inputs\": {},\n  \"samples\": {},\n  \"weight_bytes_fp32\": {},\n"
      "  \"weight_bytes\": {},\n  \"outputs\": [",
      json_string(r.precision), json_string(r.inputs), r.samples, r.weight_bytes_fp32, r.weight_bytes);
  for (size_t i = 0; i < r.outputs.size(); ++i) {
    const OutputError& e = r.outputs[i];
    s += fmt::format("{}\n    {{\"name\": {}, \"elements\": {}, \"max_abs_error\": {}, \"mean_abs_error\": {}, "
                     "\"max_abs_fp32\": {}",
                     i ? "," : "", json_string(e.name), e.elements, number(e.max_abs), number(e.mean_abs),
                     number(e.max_fp32));
    if (e.top1_agreement) s += fmt::format(", \"top1_agreement\": {}", number(*e.top1_agreement));
    if (!e.problem.empty()) s += fmt::format(", \"problem\": {}", json_string(e.problem));
    s += "}";
  }
  s += "\n  ],\n  \"notes\": [";
  for (size_t i = 0; i < r.notes.size(); ++i) s += (i ? ", " : "") + json_string(r.notes[i]);
  s += "]\n}\n";
  std::ofstream f(path, std::ios::binary);
  f << s;
  if (!f.flush()) fail("--report {}: cannot write it", path);
}

}  // namespace kiln::cli
