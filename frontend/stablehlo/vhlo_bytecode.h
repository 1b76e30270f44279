// Inside the bytecode reader (mlir_bytecode.cpp): the tables of one bytecode file (strings,
// dialects, attribute and type entries) and the VHLO decoding of its attributes and types
// (vhlo_attrs.cpp), with the table of VHLO ops kiln translates (vhlo_ops.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "frontend/stablehlo/bytecode_cursor.h"
#include "frontend/stablehlo/mlir_text.h"

namespace kiln::frontend::stablehlo {

constexpr int kMaxAttrDepth = 64;  // attributes and types inside each other (and cycles)

// One entry of the attribute or type table: its dialect and the bytes that encode it.
struct BytecodeEntry {
  size_t dialect = 0;
  bool custom = false;  // the dialect's own encoding (else assembly text)
  size_t offset = 0, size = 0;  // within the attribute/type section
};

// A VHLO type, decoded: an element type ("f32", "i1", "ui8"), a ranked tensor of one, a
// function, or something kiln does not read (named).
struct VhloType {
  enum class Kind { Element, Tensor, Function, Other };
  Kind kind = Kind::Other;
  std::string name;              // Element: the MLIR word; Other: what it is
  int bits = 0;                  // Element
  bool is_float = false, is_signed = false;
  std::vector<int64_t> dims;     // Tensor
  uint64_t element = 0;          // Tensor: its element type's index
  std::vector<uint64_t> inputs, outputs;  // Function
};

class BytecodeFile {
 public:
  const std::string* file = nullptr;
  const std::string* bytes = nullptr;
  uint64_t version = 0;
  std::vector<std::string> strings;
  std::vector<std::string> dialects;
  std::vector<BytecodeEntry> attrs, types;
  size_t attr_type_base = 0;  // file offset of the attribute/type section

  const std::string& string_at(Cursor& c, uint64_t index) const;
  uint64_t attr_index(Cursor& c) const;  // a varint naming an attribute, checked
  uint64_t type_index(Cursor& c) const;

  // Decoded on first use and kept; `depth` bounds nesting and cycles.
  const VhloType& type(uint64_t index, int depth = 0);
  // An attribute as the text reader would give it: integers, floats, strings, lists,
  // dictionaries, tensors as dense "0x..." blobs, enums as #stablehlo<kind WORD>.
  Attr attr(uint64_t index, int depth = 0);
  // The tensor type `index` names (static dims, an element type kiln has), or fails.
  TensorType tensor_type(uint64_t index, size_t offset_for_errors);
  // Integers of an attribute: a tensor of integers, an integer, or an array of integers.
  std::vector<int64_t> ints(uint64_t index, const std::string& what, size_t offset_for_errors);
  // The name of a location attribute loc("x") (a builtin NameLoc), or "" for other locations.
  std::string location_name(uint64_t index);

  [[noreturn]] void fail(size_t offset, const std::string& msg) const;

 private:
  Cursor entry_cursor(const BytecodeEntry& e) const;
  VhloType decode_type(uint64_t index, int depth);
  std::vector<std::optional<VhloType>> type_cache_;
};

// The StableHLO name and the attribute names, sorted as MLIR stores them in the properties
// section, of the VHLO op `name` ("add_v1"), or nullptr when kiln does not translate it.
struct VhloOpInfo {
  std::string stablehlo;
  std::vector<const char*> attrs;
};
const VhloOpInfo* vhlo_op(const std::string& name);

// The op's VHLO attributes (`values[k]` is the attribute index of `info.attrs[k]`) as the
// attributes the importer reads from the text form.
void translate_attrs(BytecodeFile& f, const std::string& vhlo_name, const VhloOpInfo& info,
                     const std::vector<uint64_t>& values, size_t offset, Op& op);

}  // namespace kiln::frontend::stablehlo
