// `kiln compile --precision int8` (docs/guide/quantization.md): the calibration samples read as
// tensors, the model loaded quantized (cli/model_loader.h calibrates and runs quantize_static),
// and --max-error's choice of the layers to leave in fp32.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cli/model_loader.h"
#include "cli/phase_timer.h"
#include "cli/precision_options.h"
#include "ir/graph.h"

namespace kiln::cli {

// Loads `model` quantized to int8. `load.int8` (which keeps what later loads reuse: the samples
// and the ranges) gets the samples of `precision.calibration_dir` and its calibration options.
// With --max-error E, while some output differs from fp32 by more than E on the calibration
// samples (both run by the interpreter), the quantized layer whose quantization alone costs
// the outputs most is left in fp32, and the next worst, and so on; the layers kept are printed
// and added to `notes` with the other lines the precision report should carry.
std::unique_ptr<ir::Graph> load_int8_model(const std::string& model, const LoadOptions& load,
                                           const PrecisionOptions& precision, PhaseTimer& timer,
                                           std::vector<std::string>& notes);

}  // namespace kiln::cli
