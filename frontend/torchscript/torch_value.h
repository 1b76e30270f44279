// The values PyTorch programs compute with, as the torch frontends see them at compile time:
// a tensor is an IR value (its type known, its data known when constant); scalars, strings,
// lists, tuples, devices and dtypes are known outright. Shared by the TorchScript lowering
// and the torch.export importer, so that the aten op table (aten_ops.h) serves both.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace kiln::frontend::torchscript {

struct ObjectInstance;  // a module or class instance (ts_lowering.cpp)
struct FunctionRef;     // a callable: a method, a free function, a builtin (ts_lowering.cpp)

enum class TKind { None, Bool, Int, Float, String, Tensor, List, Tuple, Dict, Device, Object, Function, Module };

struct TValue {
  TKind kind = TKind::None;
  bool b = false;
  int64_t i = 0;          // Int; also dtypes (ScalarType), layouts and memory formats, which aten passes as ints
  double f = 0;
  std::string s;          // String; Device ("cpu"); Module: a dotted path ("torch", "ops.prim")
  ir::Value* tensor = nullptr;        // Tensor
  std::shared_ptr<std::vector<TValue>> items;  // List (shared: lists are mutable and aliased), Tuple
  std::shared_ptr<std::vector<std::pair<TValue, TValue>>> dict;  // Dict, insertion order
  std::shared_ptr<ObjectInstance> object;                         // Object
  std::shared_ptr<FunctionRef> function;                          // Function

  static TValue none() { return {}; }
  static TValue boolean(bool v) { TValue t; t.kind = TKind::Bool; t.b = v; return t; }
  static TValue integer(int64_t v) { TValue t; t.kind = TKind::Int; t.i = v; return t; }
  static TValue real(double v) { TValue t; t.kind = TKind::Float; t.f = v; return t; }
  static TValue string(std::string v) { TValue t; t.kind = TKind::String; t.s = std::move(v); return t; }
  static TValue device(std::string v) { TValue t; t.kind = TKind::Device; t.s = std::move(v); return t; }
  static TValue of(ir::Value* v) { TValue t; t.kind = TKind::Tensor; t.tensor = v; return t; }
  static TValue list(std::vector<TValue> v) {
    TValue t; t.kind = TKind::List; t.items = std::make_shared<std::vector<TValue>>(std::move(v)); return t;
  }
  static TValue tuple(std::vector<TValue> v) {
    TValue t; t.kind = TKind::Tuple; t.items = std::make_shared<std::vector<TValue>>(std::move(v)); return t;
  }

  bool is_none() const { return kind == TKind::None; }
  bool is_tensor() const { return kind == TKind::Tensor; }
  bool is_number() const { return kind == TKind::Int || kind == TKind::Float || kind == TKind::Bool; }
  bool is_sequence() const { return kind == TKind::List || kind == TKind::Tuple; }
};

// "int", "Tensor", "List", ... for messages.
std::string tkind_name(TKind kind);
std::string describe(const TValue& v);

}  // namespace kiln::frontend::torchscript
