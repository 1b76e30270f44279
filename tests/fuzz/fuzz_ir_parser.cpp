// libFuzzer target: arbitrary text through the IR parser; a graph that parses must print and
// parse back to the same text.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ir/error.h"
#include "ir/parser.h"
#include "ir/printer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string printed;
  try {
    printed = kiln::ir::print_graph(*kiln::ir::parse_graph(text, "fuzz.ir"));
  } catch (const kiln::Error&) {
    return 0;
  }
  // What the printer wrote must read back, and print the same.
  if (kiln::ir::print_graph(*kiln::ir::parse_graph(printed, "printed.ir")) != printed) std::abort();
  return 0;
}
