#include "codegen/llvm/scalar_ir.h"

#include <functional>
#include <map>
#include <string>

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

#include "ir/error.h"
#include "ir/op_registry.h"

namespace kiln::codegen::llvm_ir {

namespace {

using B = llvm::IRBuilder<>;
using V = llvm::Value*;

// An f32 attribute of `op`: the node's, else the registry's default.
float attr_f(std::string_view op, const ir::AttributeMap& attrs, const char* name) {
  if (auto it = attrs.find(name); it != attrs.end()) return it->second.f();
  const ir::OpDef* def = ir::registry().find(op);
  for (const ir::AttrSpec& spec : def->attrs)
    if (spec.name == name && spec.default_value) return spec.default_value->f();
  fail("{} has no attribute {}", op, name);
}

// A string attribute of `op`: the node's, else the registry's default.
std::string attr_s(std::string_view op, const ir::AttributeMap& attrs, const char* name) {
  if (auto it = attrs.find(name); it != attrs.end()) return it->second.s();
  const ir::OpDef* def = ir::registry().find(op);
  for (const ir::AttrSpec& spec : def->attrs)
    if (spec.name == name && spec.default_value) return spec.default_value->s();
  fail("{} has no attribute {}", op, name);
}

V c(B& b, float v) { return llvm::ConstantFP::get(b.getFloatTy(), v); }

// libm's float function `name` (what std::exp(float) and friends call), or the runtime's.
V libm(B& b, llvm::Module& m, const char* name, V x) {
  llvm::FunctionCallee f = m.getOrInsertFunction(name, llvm::FunctionType::get(b.getFloatTy(), {b.getFloatTy()}, false));
  return b.CreateCall(f, {x});
}

// std::max(a, v) is (a < v) ? v : a; std::min(a, v) is (v < a) ? v : a.
V std_max(B& b, V a, V v) { return b.CreateSelect(b.CreateFCmpOLT(a, v), v, a); }
V std_min(B& b, V a, V v) { return b.CreateSelect(b.CreateFCmpOLT(v, a), v, a); }

V sigmoid_of(B& b, llvm::Module& m, V t) {  // T(1) / (T(1) + std::exp(t))
  return b.CreateFDiv(c(b, 1.f), b.CreateFAdd(c(b, 1.f), libm(b, m, "expf", t)));
}

using Lowering = std::function<V(B&, llvm::Module&, std::string_view, const ir::AttributeMap&, const std::vector<V>&)>;

const std::map<std::string, Lowering, std::less<>>& table() {
  static const std::map<std::string, Lowering, std::less<>> t = {
      {"Relu", [](B& b, llvm::Module&, auto, auto&, auto& a) {
         return b.CreateSelect(b.CreateFCmpOGT(a[0], c(b, 0.f)), a[0], c(b, 0.f));
       }},
      {"Sigmoid", [](B& b, llvm::Module& m, auto, auto&, auto& a) { return sigmoid_of(b, m, b.CreateFNeg(a[0])); }},
      {"Tanh", [](B& b, llvm::Module& m, auto, auto&, auto& a) { return libm(b, m, "tanhf", a[0]); }},
      {"Neg", [](B& b, llvm::Module&, auto, auto&, auto& a) { return b.CreateFNeg(a[0]); }},
      {"Abs", [](B& b, llvm::Module&, auto, auto&, auto& a) {
         return b.CreateSelect(b.CreateFCmpOLT(a[0], c(b, 0.f)), b.CreateFNeg(a[0]), a[0]);
       }},
      {"Exp", [](B& b, llvm::Module& m, auto, auto&, auto& a) { return libm(b, m, "expf", a[0]); }},
      {"Log", [](B& b, llvm::Module& m, auto, auto&, auto& a) { return libm(b, m, "logf", a[0]); }},
      {"Sqrt", [](B& b, llvm::Module&, auto, auto&, auto& a) {
         return b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a[0]);
       }},
      {"Reciprocal", [](B& b, llvm::Module&, auto, auto&, auto& a) { return b.CreateFDiv(c(b, 1.f), a[0]); }},
      {"Floor", [](B& b, llvm::Module&, auto, auto&, auto& a) {
         return b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, a[0]);
       }},
      {"Ceil", [](B& b, llvm::Module&, auto, auto&, auto& a) {
         return b.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, a[0]);
       }},
      {"Add", [](B& b, llvm::Module&, auto, auto&, auto& a) { return b.CreateFAdd(a[0], a[1]); }},
      {"Sub", [](B& b, llvm::Module&, auto, auto&, auto& a) { return b.CreateFSub(a[0], a[1]); }},
      {"Mul", [](B& b, llvm::Module&, auto, auto&, auto& a) { return b.CreateFMul(a[0], a[1]); }},
      {"Div", [](B& b, llvm::Module&, auto, auto&, auto& a) { return b.CreateFDiv(a[0], a[1]); }},
      {"LeakyRelu", [](B& b, llvm::Module&, auto op, auto& attrs, auto& a) {
         V alpha = c(b, attr_f(op, attrs, "alpha"));
         return b.CreateSelect(b.CreateFCmpOLT(a[0], c(b, 0.f)), b.CreateFMul(alpha, a[0]), a[0]);
       }},
      {"ThresholdedRelu", [](B& b, llvm::Module&, auto op, auto& attrs, auto& a) {
         return b.CreateSelect(b.CreateFCmpOGT(a[0], c(b, attr_f(op, attrs, "alpha"))), a[0], c(b, 0.f));
       }},
      {"Elu", [](B& b, llvm::Module& m, auto op, auto& attrs, auto& a) {
         V e = b.CreateFMul(c(b, attr_f(op, attrs, "alpha")), b.CreateFSub(libm(b, m, "expf", a[0]), c(b, 1.f)));
         return b.CreateSelect(b.CreateFCmpOLT(a[0], c(b, 0.f)), e, a[0]);
       }},
      {"HardSigmoid", [](B& b, llvm::Module&, auto op, auto& attrs, auto& a) {
         V v = b.CreateFAdd(b.CreateFMul(c(b, attr_f(op, attrs, "alpha")), a[0]), c(b, attr_f(op, attrs, "beta")));
         return std_max(b, c(b, 0.f), std_min(b, c(b, 1.f), v));
       }},
      {"HardSwish", [](B& b, llvm::Module&, auto, auto&, auto& a) {
         V v = b.CreateFAdd(b.CreateFMul(c(b, static_cast<float>(1.0 / 6)), a[0]), c(b, 0.5f));
         return b.CreateFMul(a[0], std_max(b, c(b, 0.f), std_min(b, c(b, 1.f), v)));
       }},
      {"Swish", [](B& b, llvm::Module& m, auto op, auto& attrs, auto& a) {
         return b.CreateFMul(a[0], sigmoid_of(b, m, b.CreateFMul(c(b, -attr_f(op, attrs, "alpha")), a[0])));
       }},
      {"Gelu", [](B& b, llvm::Module& m, auto op, auto& attrs, auto& a) {
         // T(0.5) * x * (...): (0.5 * x) times the bracket, as C++ groups it.
         const V half_x = b.CreateFMul(c(b, 0.5f), a[0]);
         if (attr_s(op, attrs, "approximate") == "tanh") {
           V cube = b.CreateFMul(b.CreateFMul(b.CreateFMul(c(b, 0.044715f), a[0]), a[0]), a[0]);
           V inner = b.CreateFMul(c(b, 0.7978845608028654f), b.CreateFAdd(a[0], cube));
           return b.CreateFMul(half_x, b.CreateFAdd(c(b, 1.f), libm(b, m, "tanhf", inner)));
         }
         // kiln::rt::erf, the runtime's (kiln/rt/kernel_abi.h), so its polynomial is written once.
         V e = libm(b, m, "kiln_abi_erf_f32", b.CreateFMul(a[0], c(b, 0.7071067811865476f)));
         return b.CreateFMul(half_x, b.CreateFAdd(c(b, 1.f), e));
       }},
      {"Softsign", [](B& b, llvm::Module&, auto, auto&, auto& a) {
         return b.CreateFDiv(a[0], b.CreateFAdd(c(b, 1.f), b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a[0])));
       }},
  };
  return t;
}

}  // namespace

bool has_scalar_lowering(std::string_view op) { return table().count(op) > 0; }

llvm::Value* lower_scalar(llvm::IRBuilder<>& b, llvm::Module& m, std::string_view op, const ir::AttributeMap& attrs,
                          const std::vector<llvm::Value*>& args) {
  auto it = table().find(op);
  if (it == table().end()) fail("no LLVM lowering of {}", op);
  return it->second(b, m, op, attrs, args);
}

llvm::Value* lower_clip(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* lo, llvm::Value* hi) {
  llvm::Value* up = b.CreateSelect(b.CreateFCmpOLT(x, lo), lo, x);
  return b.CreateSelect(b.CreateFCmpOGT(up, hi), hi, up);
}

llvm::Value* lower_fused_clip(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* lo, llvm::Value* hi) {
  return b.CreateSelect(b.CreateFCmpOLT(x, lo), lo, b.CreateSelect(b.CreateFCmpOGT(x, hi), hi, x));
}

}  // namespace kiln::codegen::llvm_ir
