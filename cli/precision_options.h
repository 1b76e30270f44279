// `kiln compile`'s precision options: --precision, --calibration DIR and --report FILE
// (docs/guide/quantization.md). The int8 modes add their own options here.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "ir/dtype.h"
#include "passes/calibrate.h"
#include "passes/precision.h"

namespace kiln::cli {

struct PrecisionOptions {
  passes::Precision precision = passes::Precision::FP32;
  std::string calibration_dir;  // --calibration: one sub-directory per sample, <input>.npy each
  std::string report_path;      // --report FILE.json
  // int8: --calibration-method, --calibration-percentile
  passes::CalibrationOptions calibration;
  bool calibration_set = false;  // one of those was given
  std::optional<double> max_error;  // int8: --max-error E
  std::optional<ir::DType> activations;  // int8: --activation-type u8|s8
  std::optional<bool> reduced_weights;   // int8: --weight-range full|reduced
};

// Adds the options to `cmd`, filling `options`.
void add_precision_options(CLI::App* cmd, PrecisionOptions& options);

// Fails when the options ask for something this build cannot do yet.
void check_precision_options(const PrecisionOptions& options);

// Whether --precision int8 gives the dense convolutions reduced-range weights (their pairs fit
// the AVX2 vpmaddubsw tile, passes/integer_matmul.h): as
// --weight-range says, else unless the binary is for this machine (--cpu native) and it has
// AVX-512 VNNI, whose kernel needs no reduced range (docs/guide/quantization.md).
bool reduced_weight_range(const PrecisionOptions& options, const std::string& cpu);

}  // namespace kiln::cli
