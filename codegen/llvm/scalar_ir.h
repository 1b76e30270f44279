// Scalar f32 arithmetic of the elementwise ops and fused activations as LLVM IR. The
// semantics are the IR registry's (ir/ops/elementwise_ops.def, activation_ops.def), whose C++
// expressions the reference and the C++ backend compile; each entry here spells the same
// operations in the same order (comparisons and selects as std::max/std::min define them, libm
// for exp, tanh and log), so the two backends agree bit for bit: tests/llvm/test_scalar_ir.cpp
// checks every entry against the registry's expression on edge values.
#pragma once

#include <string_view>
#include <vector>

#include <llvm/IR/IRBuilder.h>

#include "ir/attribute.h"

namespace kiln::codegen::llvm_ir {

// True when `op` has an f32 lowering here.
bool has_scalar_lowering(std::string_view op);

// op(args) on f32 values with the node's attributes (defaults from the registry); `m` receives
// the libm declarations. Fails on an op without a lowering.
llvm::Value* lower_scalar(llvm::IRBuilder<>& b, llvm::Module& m, std::string_view op, const ir::AttributeMap& attrs,
                          const std::vector<llvm::Value*>& args);

// kiln::rt::clip(x, lo, hi) (Clip) and a fused Clip's (x < lo ? lo : (x > hi ? hi : x)).
llvm::Value* lower_clip(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* lo, llvm::Value* hi);
llvm::Value* lower_fused_clip(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* lo, llvm::Value* hi);

}  // namespace kiln::codegen::llvm_ir
