// Helpers for tests that use IR text.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "ir/parser.h"
#include "ir/printer.h"

namespace kiln::ir::test {

// Parses `text`, checks that printing gives it back byte for byte, and that parsing and
// printing that again is stable.
inline std::unique_ptr<Graph> round_trip(const std::string& text) {
  std::unique_ptr<Graph> g = parse_graph(text);
  std::string printed = print_graph(*g);
  CHECK(printed == text);
  CHECK(print_graph(*parse_graph(printed)) == printed);
  return g;
}

// The message of the kiln::Error that `fn` throws, or "" if none.
template <class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const kiln::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace kiln::ir::test
