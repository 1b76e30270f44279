// The precision report of `kiln compile --precision P` (-v prints it, --report FILE.json
// writes it; docs/guide/quantization.md): per output, the error of the model compiled in P
// against the same model compiled in fp32, on the calibration samples (--calibration DIR)
// or on generated inputs; top-1 agreement for classifiers; weight bytes before and after.
// Any precision's compile can call it (fp16, bf16, int8).
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace kiln::cli {

struct OutputError {
  std::string name;
  int64_t elements = 0;   // compared, over all samples
  double max_abs = 0;     // largest |value - fp32| (infinite where one is NaN and the other not)
  double mean_abs = 0;    // mean |value - fp32|
  double max_fp32 = 0;    // largest finite |fp32|, for scale
  std::optional<double> top1_agreement;  // [N, C] float outputs: rows with the same argmax
  std::string problem;    // a shape or dtype mismatch: the errors mean nothing
};

struct PrecisionReport {
  std::string precision;  // "fp16", "int8", ...
  std::string inputs;     // where the inputs came from, in words
  size_t samples = 0;
  size_t weight_bytes_fp32 = 0, weight_bytes = 0;  // the weights blob of each compile
  std::vector<OutputError> outputs;
  std::vector<std::string> notes;  // anything else the precision wants said (one line each)
};

// The sample directories of a calibration set: DIR's sub-directories in name order, each
// with <input name>.npy (names sanitized as for outputs) for every input in `graph`. Fails
// naming DIR or the missing file.
std::vector<std::filesystem::path> calibration_samples(const std::string& dir, const ir::Graph& graph);

// Runs `exe` (the model compiled in the precision) and `fp32_exe` (the same model in fp32),
// whose graph's inputs and outputs are `graph`'s, on every calibration sample of
// `calibration_dir`, or on one set of inputs generated from `seed` when it is empty, and
// compares their outputs. Temporary files go under `work`. Fills outputs, inputs, samples.
PrecisionReport measure_precision(const ir::Graph& graph, const std::filesystem::path& exe,
                                  const std::filesystem::path& fp32_exe, const std::string& calibration_dir,
                                  uint64_t seed, const std::filesystem::path& work);

void print_precision_report(const PrecisionReport& report, std::FILE* out);
// Writes the report as JSON; fails naming the file when it cannot.
void write_precision_report(const PrecisionReport& report, const std::string& path);

}  // namespace kiln::cli
