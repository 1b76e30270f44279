// MLIR bytecode of a StableHLO module in its portable form (VHLO), as jax.export serializes it,
// read into the same syntax tree as the text (mlir_text.h). kiln reads the bytecode itself:
// the file header, the string, dialect, attribute/type, properties and IR sections, and the
// VHLO encodings of the attributes and types its ops use (stablehlo/dialect/VhloBytecode.cpp).
// VHLO ops become their StableHLO names (vhlo.add_v1 -> stablehlo.add, vhlo.func_v1 ->
// a Func, vhlo.call_v1 -> func.call, vhlo.return_v1 -> func.return or stablehlo.return), and
// their attributes the Attr values the text gives (tensors as dense "0x..." blobs, dot and
// convolution dimension numbers as their text forms). An op outside the table, or a dialect
// other than builtin and vhlo, is refused by name.
//
// The bytes are untrusted: every varint, count, size, index and offset is checked before it
// is used, attribute references are followed with a bounded depth (a cycle is an error), and
// errors name the file and the byte offset.
#pragma once

#include <optional>
#include <string>

#include "frontend/stablehlo/mlir_text.h"

namespace kiln::frontend::stablehlo {

// True when `bytes` starts with MLIR bytecode's magic, "ML\xEFR".
bool is_mlir_bytecode(const std::string& bytes);

// Parses VHLO bytecode; `file` names it in messages ("model.mlirbc: offset 12: ...").
// Op locations are Loc{0, byte offset of the op}; an argument's loc("name") becomes its
// Func::arg_locs entry, as in the text.
Module parse_bytecode(const std::string& bytes, const std::string& file);

// The MLIR bytecode inside a jax.export serialized artifact (the flatbuffer of
// jax/_src/export/serialization.fbs, field mlir_module_serialized), or nullopt when `bytes`
// is not such an artifact. Offsets are checked; nothing is read past the end.
std::optional<std::string> jax_exported_bytecode(const std::string& bytes);

}  // namespace kiln::frontend::stablehlo
