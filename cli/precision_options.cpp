#include "cli/precision_options.h"

#include <filesystem>

#include <fmt/format.h>

#include "ir/error.h"

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
         "fp32; int8-dynamic: MatMul/Gemm weights int8 per column, activations quantized per run; int8: not yet")
      ->type_name("PRECISION");
  cmd->add_option("--calibration", options.calibration_dir,
                  "sample inputs for the precision report (and int8 calibration): one sub-directory per sample "
                  "holding <input name>.npy for every input")
      ->type_name("DIR");
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
      return;
    case passes::Precision::Int8:
      fail("--precision {}: not yet supported (fp32, fp16, bf16 and int8-dynamic are)", passes::precision_name(options.precision));
  }
}

}  // namespace kiln::cli
