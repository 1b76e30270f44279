// The MLIR text that JAX prints for a StableHLO module (`jax.jit(f).lower(...).as_text()`),
// read into a small syntax tree: functions, their blocks, and each op's operands, bare
// keywords, attributes, types and regions. Both the pretty form of the stablehlo, chlo and
// func ops (`stablehlo.add %0, %1 : tensor<4xf32>`) and the generic form
// (`"stablehlo.add"(%0, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>`) are read,
// the latter for modules and functions too (`"builtin.module"() ({ "func.func"() ... })`);
// what an op means is left to the importer (stablehlo_importer.cpp).
//
// The text is untrusted: every malformed token fails with kiln::Error naming the file and
// the line:column, nesting is bounded, nothing is read past the end.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace kiln::frontend::stablehlo {

struct Loc {
  int line = 0;
  int col = 0;
};

// tensor<2x3xf32>; `dims` are static (dynamic dims are refused when read).
struct TensorType {
  ir::DType dtype = ir::DType::F32;
  std::vector<int64_t> dims;
  std::string str() const;  // "tensor<2x3xf32>"
};

// An attribute value as written: numbers, strings, bare words (GT, DEFAULT, b), lists,
// dictionaries, dense<...> and array<i64: ...> literals, and opaque #dialect<...> text.
struct Attr {
  enum class Kind { Int, Float, Bool, String, Word, List, Dict, Dense, DenseArray, Opaque, Type };
  Kind kind = Kind::Word;
  int64_t i = 0;
  double f = 0;
  std::string s;  // String, Word, Dense (the text inside dense<...>), Opaque (the whole text)
  std::vector<Attr> items;        // List, DenseArray (Int or Float items), Dict (the values)
  std::vector<std::string> keys;  // Dict: the key of each item
  std::optional<TensorType> type;                     // Dense: its `: tensor<...>`
  Loc loc;

  const Attr* find(const std::string& key) const;  // a Dict's value for `key`, or nullptr
  std::string describe() const;                    // for messages
};

struct Op;

// One block: its arguments and ops (a region of one block; ^bb labels are read and dropped).
struct Block {
  std::vector<std::pair<std::string, TensorType>> args;
  std::vector<std::string> arg_locs;  // as Func::arg_locs
  std::vector<Op> ops;
};

struct Op {
  std::string name;  // "stablehlo.add", "func.call", "func.return"
  Loc loc;
  std::vector<std::string> results;   // "%0", or "%0#0", "%0#1" for `%0:2 = ...`
  std::vector<std::string> operands;  // value names, "%arg0", "%3", "%0#1"
  int num_inits = 0;                  // reduce's `(%x init: %c)`: the last num_inits operands
  std::vector<std::string> words;     // bare keywords of the pretty form, in order
  std::map<std::string, Attr> attrs;  // keyword attributes, properties and the attribute dict
  std::vector<std::vector<int64_t>> slice;  // stablehlo.slice's [start:limit(:stride), ...]
  std::string callee;                 // call @name
  std::vector<TensorType> operand_types;  // empty when the form gives only the result type
  std::vector<TensorType> result_types;
  std::vector<Block> regions;
};

struct Func {
  std::string name;
  Loc loc;
  std::vector<std::pair<std::string, TensorType>> args;
  std::vector<std::string> arg_locs;  // the name in `loc("params['w']")` after an argument, or ""
  std::vector<TensorType> results;
  Block body;
};

struct Module {
  std::string file;  // for messages
  std::map<std::string, Func> funcs;
};

// Parses `text`; `file` names it in messages ("model.mlir:3:17: ..."). An op whose custom
// form cannot be read is reported as unsupported when its name is not in `known_ops` (a
// while loop's `cond {...} do {...}`), as malformed when it is.
Module parse_module(const std::string& text, const std::string& file, const std::set<std::string>& known_ops = {});

// The element type named by an MLIR type word (f32, i1, ui8, bf16...), or nullopt.
std::optional<ir::DType> element_type(const std::string& word);

}  // namespace kiln::frontend::stablehlo
