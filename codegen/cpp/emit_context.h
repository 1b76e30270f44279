// What an emitter sees while it writes C++ for one node: where every value lives (a graph
// input or output pointer, the embedded weights, an arena offset), helpers for literals
// and constant arrays, and the output buffer.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/cpp/emit_options.h"
#include "ir/graph.h"

namespace kiln::codegen::cpp {

struct Location {
  // Widened: a weight stored in half precision, read from its fp32 copy (weight_blob.h).
  enum Kind { Input, Output, Weight, Widened, Arena } kind = Arena;
  size_t index = 0;   // graph input or output position
  size_t offset = 0;  // byte offset in the weights, the widened weights or the arena
};

class WeightBlob;

// The most bytes a value holds: its shape with each symbolic dim at its upper bound (the
// value's graph's --dim bounds). Fails on a dim without bounds.
size_t max_value_bytes(const ir::Value* v);

// C++ spelling of a dtype's storage type, and of the type arithmetic is done in.
std::string cpp_type(ir::DType t);
std::string cpp_compute_type(ir::DType t);
std::string kiln_dtype_enum(ir::DType t);
// A literal that reads back as exactly `v` (inf and nan spelled through numeric_limits).
std::string float_literal(double v, ir::DType t);
// A C++ string literal with escapes. NUL, which a C string cannot hold, becomes the two
// characters \0, so names that differ after a NUL stay distinct.
std::string string_literal(const std::string& s);
// Text from the model made safe inside a // or /* */ comment (and a CMake # comment): control
// characters become spaces, backslashes (line continuations) become '/', "*/" becomes "* /".
std::string comment_text(const std::string& s);

class EmitContext {
 public:
  // `weights`: the weights blob, which add_weight_floats appends to.
  EmitContext(std::unordered_map<const ir::Value*, Location> locations,
              std::unordered_map<const ir::Node*, size_t> scratch, const EmitOptions& options,
              WeightBlob* weights = nullptr)
      : locations_(std::move(locations)), scratch_(std::move(scratch)), options_(options), weights_(weights) {}

  // The user's choices for the generated code (kiln compile's flags).
  const EmitOptions& options() const { return options_; }

  // Run-time extents. The generated code holds `D`, the values of the symbolic dims left
  // open with --dim NAME=MIN..MAX, in the order of `ranges` (Graph::dim_ranges).
  void set_dim_ranges(const ir::DimRanges& ranges) { ranges_ = ranges; }
  const ir::DimRanges& dim_ranges() const { return ranges_; }
  // A dim as C++: its number, or an int64_t expression over D[k]. Fails on an unknown dim or
  // a symbol without bounds.
  std::string dim(const ir::Dim& d) const;
  // The dims' expressions, comma-separated (a braced initializer's contents).
  std::string dim_list(const std::vector<ir::Dim>& dims) const;
  // The run's slot of a data-dependent symbol (ir::DimRange::data_dependent), as an lvalue:
  // the node that computes the count stores it there for the nodes after it.
  std::string dim_slot(const std::string& symbol) const;
  // Extent `axis` of a value, and its element count.
  std::string extent(const ir::Value* v, size_t axis) const { return dim(v->shape()[axis]); }
  std::string numel(const ir::Value* v) const { return dim(v->shape().product()); }
  // The bytes a value holds in this run, as C++ (a number when its shape is static).
  std::string run_bytes(const ir::Value* v) const;
  // Name of an int64_t array holding `dims`: a shared static one when they are all numbers
  // (array()), else a local one computed in the node's body.
  std::string dims(const std::vector<ir::Dim>& dims);

  // Typed pointer expressions for a node's input (const) and output (mutable) data.
  std::string in(const ir::Node& node, size_t i) const;
  std::string out(const ir::Node& node, size_t i) const;
  std::string value_ptr(const ir::Value* v, bool writable) const;
  // `unsigned char*` expression for the node's scratch memory.
  std::string scratch(const ir::Node& node) const;
  // Name of a namespace-scope `static const int64_t` array holding `values` (shared
  // between identical arrays).
  std::string array(const std::vector<int64_t>& values);
  // Name `kiln_epN` of a namespace-scope epilogue function (kiln::rt::Epilogue::fn's signature:
  // c, y, offset, n) with `body`, shared between identical bodies; the Epilogue takes
  // KILN_EPILOGUE_PICK(kiln_epN), which is a build of it for this CPU (kiln/rt/epilogue.h).
  std::string epilogue_function(const std::string& body);
  // Appends floats computed at compile time (e.g. packed weights) to the weights blob, 64-byte
  // aligned (in half precision with --precision fp16|bf16); returns a `const float*`
  // expression for them.
  std::string add_weight_floats(const std::vector<float>& values);
  // True when the B of a MatMul or Gemm (K x N constant floats), or a 1x1 blocked Conv's
  // weights (K = C, N = M), are stored for the native bf16 GEMM (--precision bf16);
  // add_bf16_weights appends them (packed by gemm_bf16_pack_b or conv_nchwc_bf16_pack_weights)
  // and returns `const float*` and `const uint16_t*` expressions: the fp32 copy (null where
  // the CPU has native bf16) and the bf16 weights (weight_blob.h).
  bool stores_gemm_b_bf16(int64_t K, int64_t N) const;
  struct Bf16Weights {
    std::string widened, bf16;
  };
  Bf16Weights add_bf16_weights(const std::vector<uint16_t>& packed, int64_t K, int64_t N, bool conv);
  // The same for raw bytes (packed int8 weights, int32 arrays); a `const unsigned char*`.
  std::string add_weight_bytes(const void* data, size_t size);

  // Appends one line of the node's body (indentation is added).
  void line(const std::string& text);
  // A statement that fails the run with `message` (plain text) from this node.
  std::string fail_stmt(const ir::Node& node, const std::string& message) const;

  // Switches to another graph (a control-flow body, or back): its value locations and scratch
  // offsets, and an empty body. Arrays and functions stay shared.
  void set_graph(std::unordered_map<const ir::Value*, Location> locations,
                 std::unordered_map<const ir::Node*, size_t> scratch) {
    locations_ = std::move(locations);
    scratch_ = std::move(scratch);
    body_.clear();
  }

  void begin_node(const ir::Node& node);
  void end_node();
  // Between these, the code of one item of a batch (codegen/cpp/batch_loop.h): a loop over
  // `count` items (a C++ expression), in which the pointers of `items` (values typed for one
  // item) step one item per iteration.
  void begin_batch_loop(const std::string& count, const std::vector<const ir::Value*>& items);
  void end_batch_loop();
  const std::string& body() const { return body_; }
  const std::string& arrays() const { return arrays_; }
  const std::string& functions() const { return functions_; }

 private:
  const Location& location(const ir::Value* v) const;
  std::string located_ptr(const ir::Value* v, bool writable) const;  // value_ptr outside batch loops

  ir::DimRanges ranges_;
  size_t local_arrays_ = 0;
  std::unordered_map<const ir::Value*, int64_t> item_elements_;  // in a batch loop: elements per item
  std::unordered_map<const ir::Value*, Location> locations_;
  std::unordered_map<const ir::Node*, size_t> scratch_;
  std::map<std::vector<int64_t>, std::string> array_names_;
  EmitOptions options_;
  WeightBlob* weights_ = nullptr;
  std::string arrays_;
  std::map<std::string, std::string> function_names_;
  std::string functions_;
  std::string body_;
};

}  // namespace kiln::codegen::cpp
