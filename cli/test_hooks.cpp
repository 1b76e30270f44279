#include "cli/test_hooks.h"

#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "ir/error.h"

namespace kiln::cli {
namespace {

// Splits "NAME:NUMBER" at the last ':'; the number is optional when `fallback` is given.
std::pair<std::string, double> name_and_number(const char* var, const std::string& text, const double* fallback) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) {
    if (!fallback) fail("{}={}: expected NAME:NUMBER", var, text);
    return {text, *fallback};
  }
  const std::string number = text.substr(colon + 1);
  char* end = nullptr;
  const double v = std::strtod(number.c_str(), &end);
  if (number.empty() || *end != '\0') fail("{}={}: '{}' is not a number", var, text, number);
  return {text.substr(0, colon), v};
}

}  // namespace

codegen::cpp::TestHooks test_hooks_from_env() {
  codegen::cpp::TestHooks hooks;
  if (const char* v = std::getenv("KILN_TEST_PERTURB_NODE"); v && *v) {
    const double delta = 0.5;
    std::tie(hooks.perturb_node, hooks.perturb_delta) = name_and_number("KILN_TEST_PERTURB_NODE", v, &delta);
    fmt::print(stderr, "kiln: warning: test hook KILN_TEST_PERTURB_NODE: node '{}' is deliberately wrong\n",
               hooks.perturb_node);
  }
  if (const char* v = std::getenv("KILN_TEST_DELAY_NODE"); v && *v) {
    std::tie(hooks.delay_node, hooks.delay_ms) = name_and_number("KILN_TEST_DELAY_NODE", v, nullptr);
    if (hooks.delay_ms < 0) fail("KILN_TEST_DELAY_NODE={}: the delay must not be negative", v);
    fmt::print(stderr, "kiln: warning: test hook KILN_TEST_DELAY_NODE: node '{}' is deliberately slow\n",
               hooks.delay_node);
  }
  return hooks;
}

}  // namespace kiln::cli
