// libFuzzer target: arbitrary text through the StableHLO importer (parser, dense literals, op
// lowerings); anything but a kiln::Error is a finding.
#include <cstdint>
#include <string>

#include "frontend/stablehlo/stablehlo_importer.h"
#include "ir/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  kiln::frontend::StableHloImportOptions options;
  options.limits.max_elements = 1 << 20;  // keep the fuzzer's allocations small
  options.limits.max_tensor_bytes = 1 << 24;
  try {
    kiln::frontend::import_stablehlo_text(text, "fuzz.mlir", options);
  } catch (const kiln::Error&) {
  }
  return 0;
}
