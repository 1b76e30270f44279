// A cursor over MLIR text, the lexical half of the StableHLO parser (mlir_text.cpp):
// characters, names, strings, numbers, tensor types, attribute values and locations. Every
// error names the file and line:column; nesting is bounded.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "frontend/stablehlo/mlir_text.h"

namespace kiln::frontend::stablehlo {

constexpr int kMaxNesting = 200;  // brackets, regions and attributes inside each other

bool ident_start(char c);
bool ident_char(char c);

class MlirReader {
 public:
  MlirReader(const std::string& text, const std::string& file);

 protected:
  // ---- characters ----------------------------------------------------------------------
  bool at_end() const { return p_ >= t_.size(); }
  char peek(size_t k = 0) const { return p_ + k < t_.size() ? t_[p_ + k] : '\0'; }
  Loc loc_at(size_t pos) const;
  [[noreturn]] void error_at(size_t pos, const std::string& msg) const;
  [[noreturn]] void error(const std::string& msg) const { error_at(p_, msg); }
  std::string describe_here() const;
  void ws();
  bool eat(char c);
  bool eat_arrow();
  void expect(char c, const char* what);
  // True when the next bare identifier is exactly `w`.
  bool word_ahead(const char* w);
  std::string ident();
  // %name, %name#N
  std::string value_name();
  std::string symbol();
  std::string string_lit();
  // Skips a bracketed group starting at the current character ('(', '[', '{' or '<'),
  // honouring strings and "->"; returns the text inside.
  std::string group();
  // ---- numbers, types, attributes ---------------------------------------------------------
  // An integer (decimal or 0x hex) or a float.
  Attr number();
  // tensor<2x3xf32>; dynamic dims, encodings and element types kiln lacks are refused.
  TensorType tensor_type();
  // A type in an attribute (`1 : i64`, `dense<...> : tensor<4xf32>`): tensor types are read,
  // other types only skipped.
  std::optional<TensorType> attr_type();
  // An attribute value. `typed`: a `: type` after a number or a dense<...> belongs to it
  // (false in an op's pretty form, where the colon starts the op's types).
  Attr attr(bool typed);
  Attr attr_inner(bool typed);  // attr() without the nesting count
  bool peek_colon() {
    ws();
    return peek() == ':';
  }
  // `#name = value` at the top level: location aliases are kept for argument names.
  void alias();
  // An optional `loc(...)`; returns the name a location such as loc("x") gives, "#locN" for a
  // reference to an alias, or "".
  std::string location();

  const std::string& t_;
  std::string file_;
  size_t p_ = 0;
  int depth_ = 0;
  std::vector<size_t> line_starts_;
  std::map<std::string, std::string> loc_aliases_;  // #loc3 -> the name in loc("x"), for alias()
};

}  // namespace kiln::frontend::stablehlo
