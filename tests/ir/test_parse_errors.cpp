// Malformed IR text: each error names SOURCE:LINE:COL and says what is wrong.
#include <doctest/doctest.h>

#include "ir_text_util.h"

using namespace kiln::ir;
using kiln::ir::test::error_of;

namespace {

std::string parse_error(const std::string& text, const std::string& source = "<text>") {
  return error_of([&] { parse_graph(text, source); });
}

}  // namespace

TEST_CASE("unknown op") {
  CHECK(parse_error("graph m(%x: f32[1]) -> (%y) {\n  %y = Frobnicate(%x)\n}\n", "t.ir") ==
        "t.ir:2:8: unknown op 'Frobnicate'");
}

TEST_CASE("undefined value, in a node and in the graph outputs") {
  CHECK(parse_error("graph m(%x: f32[1]) -> (%y) {\n  %y = Relu(%z)\n}\n") ==
        "<text>:2:13: undefined value '%z'");
  CHECK(parse_error("graph m(%x: f32[1]) -> (%x, %nope) {\n}\n") == "<text>:1:29: undefined value '%nope'");
  // Used before it is defined is the same error: text is read in order.
  CHECK(parse_error("graph m(%x: f32[1]) -> () {\n  %a = Relu(%b)\n  %b = Relu(%x)\n}\n") ==
        "<text>:2:13: undefined value '%b'");
}

TEST_CASE("bad dtype and bad dims") {
  CHECK(parse_error("graph m(%x: f33[1]) -> () {\n}\n") == "<text>:1:13: unknown dtype 'f33'");
  CHECK(parse_error("graph m(%x: f32[1,-2]) -> () {\n}\n") ==
        "<text>:1:19: expected a dim (a size, a name or '?'), found '-2'");
  CHECK(parse_error("graph m(%x: f32[1.5]) -> () {\n}\n") ==
        "<text>:1:17: expected a dim (a size, a name or '?'), found '1.5'");
  CHECK(parse_error("graph m() -> () {\n  %c = constant f32[N] [1]\n}\n") ==
        "<text>:2:17: tensor shape [N] must be static");
}

TEST_CASE("unterminated string and bad escapes") {
  CHECK(parse_error("graph m(%x: f32[1]) -> () {\n  %y = Relu(%x) @\"abc\n}\n") ==
        "<text>:2:18: unterminated string");
  CHECK(parse_error("graph \"m") == "<text>:1:7: unterminated string");
  CHECK(parse_error("graph m(%x: f32[1]) -> () {\n  %y = Relu(%x) @\"a\\qb\"\n}\n") ==
        "<text>:2:20: unknown escape '\\q'");
  CHECK(parse_error("graph \"\\x4\"") == "<text>:1:8: \\x must be followed by two hex digits");
}

TEST_CASE("duplicate value names") {
  CHECK(parse_error("graph m(%x: f32[1]) -> () {\n  %x = Relu(%x)\n}\n") ==
        "<text>:2:3: value '%x' is already defined");
  CHECK(parse_error("graph m(%x: f32[1], %x: f32[1]) -> () {\n}\n") ==
        "<text>:1:21: value '%x' is already defined");
  CHECK(parse_error("graph m(%x: f32[1]) -> () {\n  %a, %a = Relu(%x)\n}\n") ==
        "<text>:2:7: value '%a' is already defined");
  CHECK(parse_error("graph m(%x: f32[1]) -> () {\n  %y = Relu(%x) {g=graph s(%x) -> () {\n  }}\n}\n") ==
        "<text>:2:28: value '%x' shadows a value of an enclosing graph");
}

TEST_CASE("syntax errors say what was expected") {
  CHECK(parse_error("") == "<text>:1:1: expected 'graph', found end of input");
  CHECK(parse_error("graph m(%x: f32[1]) -> () {\n  %y = Relu(%x)\n") ==
        "<text>:3:1: expected '}' at the end of the graph");
  CHECK(parse_error("graph m(%x: f32[1]) -> () {\n  %y Relu(%x)\n}\n") ==
        "<text>:2:6: expected '=', found 'Relu'");
  CHECK(parse_error("graph m(%x: f32[1]) -> () {\n}\ngraph n() -> () {\n}\n") ==
        "<text>:3:1: expected end of input after the graph");
  CHECK(parse_error("graph m() -> () {\n  %y = Relu($)\n}\n") == "<text>:2:13: unexpected character '$'");
  CHECK(parse_error("graph m() -> (%) {\n}\n") == "<text>:1:15: expected a value name after '%'");
  CHECK(parse_error("graph m(%\"\") -> () {\n}\n") == "<text>:1:9: a value name cannot be empty");
  CHECK(parse_error("graph m(%x: f32[1]) -> () {\n  %y: f32[1] = constant f32[1] [1]\n}\n") ==
        "<text>:2:16: a constant takes its type from its data; write no ': type'");
}

TEST_CASE("bad attribute values") {
  const std::string head = "graph m(%x: f32[1]) -> () {\n  %y = Relu(%x) {";
  CHECK(parse_error(head + "a=[]}\n}\n") ==
        "<text>:2:20: an empty list needs its type: write ints[], floats[] or strings[]");
  CHECK(parse_error(head + "a=[1, \"s\"]}\n}\n") == "<text>:2:24: a list holds numbers or strings, not both");
  CHECK(parse_error(head + "a=1, a=2}\n}\n") == "<text>:2:23: attribute 'a' is given twice");
  CHECK(parse_error(head + "a=%x}\n}\n") == "<text>:2:20: expected an attribute value, found value '%x'");
  CHECK(parse_error(head + "a=99999999999999999999}\n}\n") ==
        "<text>:2:20: integer 99999999999999999999 is out of range");
  CHECK(parse_error(head + "a=1.2.3}\n}\n") == "<text>:2:20: invalid number '1.2.3'");
}

TEST_CASE("bad tensor data") {
  const std::string head = "graph m() -> () {\n  %c = constant ";
  CHECK(parse_error(head + "u8[2] [1, 256]\n}\n") == "<text>:2:27: 256 is out of range for u8");
  CHECK(parse_error(head + "i32[2] [1, 2.5]\n}\n") == "<text>:2:28: expected an integer, found '2.5'");
  CHECK(parse_error(head + "f32[2] [1]\n}\n") == "<text>:2:24: expected 2 elements, found 1");
  CHECK(parse_error(head + "f32[1] [1, 2]\n}\n") == "<text>:2:28: too many elements: the tensor has 1");
  CHECK(parse_error(head + "bool[1] [1]\n}\n") == "<text>:2:26: expected true or false, found '1'");
  CHECK(parse_error(head + "f32[1] hex\"0000\"\n}\n") ==
        "<text>:2:27: f32 tensor needs 4 bytes, found 4 hex digits");
  CHECK(parse_error(head + "i16[1] hex\"00zz\"\n}\n") ==
        "<text>:2:27: invalid hex digit 'z'");
}
