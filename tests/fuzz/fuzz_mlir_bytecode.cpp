// libFuzzer target: arbitrary bytes through the MLIR bytecode reader (sections, VHLO
// attributes and types, properties, the IR walk) and the jax.export flatbuffer lookup; anything
// but a kiln::Error is a finding. The importer's lowerings are fuzz_stablehlo's.
#include <cstdint>
#include <string>

#include "frontend/stablehlo/mlir_bytecode.h"
#include "ir/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    if (auto inner = kiln::frontend::stablehlo::jax_exported_bytecode(bytes)) bytes = *inner;
    kiln::frontend::stablehlo::parse_bytecode(bytes, "fuzz.mlirbc");
  } catch (const kiln::Error&) {
  }
  return 0;
}
