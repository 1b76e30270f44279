#include "cli/precision_options.h"

#include <filesystem>

#include <fmt/format.h>

#include "ir/error.h"
#include "kiln/rt/qgemm.h"

namespace kiln::cli {

void add_precision_options(CLI::App* cmd, PrecisionOptions& options) {
  auto* o = &options;
  cmd->add_option_function<std::string>(
         "--precision",
         [o](const std::string& text) {
           std::optional<passes::Precision> p = passes::parse_precision(text);
           if (!p) throw CLI::ValidationError("--precision", "expected fp32, fp16, bf16, int8 or int8-dynamic, got '" + text + "'");
           o->precision = *p;
         },
         "fp32 (default); fp16 or bf16: float weights stored in half precision (half the size), computed in "
         "fp32 (bf16 MatMul, Gemm and 1x1 Conv in bf16 on CPUs with AVX512_BF16); int8-dynamic: MatMul/Gemm weights int8 per column, activations quantized per run; int8: static "
         "quantization calibrated on --calibration DIR (Conv/MatMul/Gemm weights int8 per channel, activations u8 or s8)")
      ->type_name("PRECISION");
  cmd->add_option("--calibration", options.calibration_dir,
                  "sample inputs for the precision report (and int8 calibration): one sub-directory per sample "
                  "holding <input name>.npy for every input")
      ->type_name("DIR");
  cmd->add_option_function<std::string>(
         "--calibration-method",
         [o](const std::string& text) {
           std::optional<passes::CalibrationMethod> m = passes::parse_calibration_method(text);
           if (!m) throw CLI::ValidationError("--calibration-method", "expected minmax, percentile or entropy, got '" + text + "'");
           o->calibration.method = *m;
           o->calibration_set = true;
         },
         "int8: how each activation's range is chosen from the calibration data: minmax (default), percentile "
         "(--calibration-percentile of the values) or entropy (the clipping threshold minimizing the KL divergence)")
      ->type_name("METHOD");
  cmd->add_option_function<double>(
         "--calibration-percentile",
         [o](double p) {
           if (!(p > 0 && p <= 100)) throw CLI::ValidationError("--calibration-percentile", "expected a value in (0, 100]");
           o->calibration.percentile = p;
           o->calibration_set = true;
         },
         "int8 with --calibration-method percentile: the share of each activation's values (in %) its range keeps "
         "(default 99.99)")
      ->type_name("P");
  cmd->add_option_function<std::string>(
         "--activation-type",
         [o](const std::string& text) {
           if (text != "u8" && text != "s8") throw CLI::ValidationError("--activation-type", "expected u8 or s8, got '" + text + "'");
           o->activations = text == "s8" ? ir::DType::I8 : ir::DType::U8;
         },
         "int8: the activations' type, u8 (default) or s8, asymmetric per tensor either way")
      ->type_name("TYPE");
  cmd->add_option_function<std::string>(
         "--weight-range",
         [o](const std::string& text) {
           if (text != "full" && text != "reduced")
             throw CLI::ValidationError("--weight-range", "expected full or reduced, got '" + text + "'");
           o->reduced_weights = text == "reduced";
         },
         "int8: full ([-127, 127]) or reduced weights of the dense convolutions (every pair of input channels "
         "within 128 of one sign); reduced runs them faster on AVX2 machines without VNNI, at a small cost in accuracy (default: reduced, but full with "
         "--cpu native on a machine with AVX-512 VNNI)")
      ->type_name("RANGE");
  cmd->add_option_function<double>(
         "--max-error",
         [o](double e) {
           if (!(e >= 0)) throw CLI::ValidationError("--max-error", "expected a non-negative number");
           o->max_error = e;
         },
         "int8: keep in fp32 the layers whose quantization costs most until no output differs from fp32 by more "
         "than E on the calibration samples")
      ->type_name("E");
  cmd->add_option("--report", options.report_path,
                  "write the precision report (error against fp32, weight sizes) as JSON; -v prints it")
      ->type_name("FILE");
}

void check_precision_options(const PrecisionOptions& options) {
  if (!options.report_path.empty()) {  // before building, rather than failing after
    std::error_code ec;
    std::filesystem::path dir = std::filesystem::absolute(options.report_path, ec).parent_path();
    if (!std::filesystem::is_directory(dir, ec)) fail("--report {}: no directory {}", options.report_path, dir.string());
    if (std::filesystem::is_directory(options.report_path, ec)) fail("--report {}: is a directory", options.report_path);
  }
  switch (options.precision) {
    case passes::Precision::FP32:
    case passes::Precision::FP16:
    case passes::Precision::BF16:
    case passes::Precision::Int8Dynamic:
      break;
    case passes::Precision::Int8:
      if (options.calibration_dir.empty()) fail("--precision int8 needs calibration samples (--calibration DIR)");
      return;
  }
  if (options.calibration_set) fail("--calibration-method and --calibration-percentile apply to --precision int8 only");
  if (options.max_error) fail("--max-error applies to --precision int8 only");
  if (options.activations) fail("--activation-type applies to --precision int8 only");
  if (options.reduced_weights) fail("--weight-range applies to --precision int8 only");
}

bool reduced_weight_range(const PrecisionOptions& options, const std::string& cpu) {
  if (options.reduced_weights) return *options.reduced_weights;
  return !(cpu == "native" && rt::qgemm_isa_supported(rt::QGemmIsa::avx512_vnni));
}

}  // namespace kiln::cli
