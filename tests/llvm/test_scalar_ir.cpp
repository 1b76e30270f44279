// codegen/llvm/scalar_ir: every op with a scalar lowering, JIT-compiled for this machine and
// run on edge values (signed zeros, infinities, NaN, tiny and huge numbers, the points where
// the activations change branch) and random ones, must give the IR registry's reference
// results bit for bit: the LLVM backend promises the C++ backend's exact arithmetic.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <cstring>
#include <limits>

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/TargetSelect.h>

#include "codegen/llvm/scalar_ir.h"
#include "ir/interpreter.h"
#include "ir/op_registry.h"
#include "kiln/rt/kernel_abi.h"
#include "kiln/rt/scalar_ops.h"
#include "op_test_util.h"

namespace {

using kiln::ir::Tensor;

std::vector<float> edge_values() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {0.f,    -0.f,    1.f,    -1.f,  0.5f,  -0.5f,  2.f,   -3.f,   6.f,  -6.f,    3.f,
                          1e-30f, -1e-30f, 1e-45f, 1e30f, -1e30f, 88.7f, -88.7f, 100.f, -100.f, inf, -inf,
                          std::numeric_limits<float>::quiet_NaN(), 0.1f, -0.1f, 0.01f, 20.f, -20.f};
  uint32_t seed = 12345;
  for (int i = 0; i < 200; ++i) {
    seed = seed * 1664525u + 1013904223u;
    v.push_back((static_cast<float>(seed >> 8) / static_cast<float>(1u << 23) - 1.f) * 12.f);
  }
  return v;
}

bool same_bits(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// out[i] = f(a[i], b[i], c[i]) (the first `arity` of them), compiled by LLJIT for this machine.
using Kernel = void (*)(const float*, const float*, const float*, float*, int64_t);
using Body = std::function<llvm::Value*(llvm::IRBuilder<>&, llvm::Module&, const std::vector<llvm::Value*>&)>;

class Jit {
 public:
  Jit() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    auto jit = llvm::orc::LLJITBuilder().create();
    REQUIRE(static_cast<bool>(jit));
    jit_ = std::move(*jit);
    auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
        jit_->getDataLayout().getGlobalPrefix());
    REQUIRE(static_cast<bool>(process));
    jit_->getMainJITDylib().addGenerator(std::move(*process));
    // The runtime's entry points the lowerings call (Gelu's erf), from this test's own link.
    llvm::orc::SymbolMap runtime;
    runtime[jit_->mangleAndIntern("kiln_abi_erf_f32")] = {llvm::orc::ExecutorAddr::fromPtr(&kiln_abi_erf_f32),
                                                          llvm::JITSymbolFlags::Exported};
    llvm::cantFail(jit_->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(runtime))));
  }

  Kernel compile(const std::string& op, size_t arity) {
    return compile("kernel_" + op, arity, [op](llvm::IRBuilder<>& b, llvm::Module& m, const std::vector<llvm::Value*>& a) {
      return kiln::codegen::llvm_ir::lower_scalar(b, m, op, {}, a);
    });
  }

  Kernel compile(const std::string& name, size_t arity, const Body& body) {
    auto context = std::make_unique<llvm::LLVMContext>();
    auto m = std::make_unique<llvm::Module>(name, *context);
    m->setDataLayout(jit_->getDataLayout());
    llvm::IRBuilder<> b(*context);
    llvm::Type* p = llvm::PointerType::get(*context, 0);
    auto* f = llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), {p, p, p, p, b.getInt64Ty()}, false),
                                     llvm::GlobalValue::ExternalLinkage, name, *m);
    auto* entry = llvm::BasicBlock::Create(*context, "entry", f);
    auto* loop = llvm::BasicBlock::Create(*context, "loop", f);
    auto* done = llvm::BasicBlock::Create(*context, "done", f);
    b.SetInsertPoint(entry);
    b.CreateCondBr(b.CreateICmpSGT(f->getArg(4), b.getInt64(0)), loop, done);
    b.SetInsertPoint(loop);
    llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2);
    i->addIncoming(b.getInt64(0), entry);
    std::vector<llvm::Value*> args;
    for (unsigned k = 0; k < arity; ++k)
      args.push_back(b.CreateLoad(b.getFloatTy(), b.CreateGEP(b.getFloatTy(), f->getArg(k), i)));
    b.CreateStore(body(b, *m, args), b.CreateGEP(b.getFloatTy(), f->getArg(3), i));
    llvm::Value* next = b.CreateAdd(i, b.getInt64(1));
    i->addIncoming(next, loop);
    b.CreateCondBr(b.CreateICmpSLT(next, f->getArg(4)), loop, done);
    b.SetInsertPoint(done);
    b.CreateRetVoid();
    llvm::cantFail(jit_->addIRModule(llvm::orc::ThreadSafeModule(std::move(m), std::move(context))));
    auto symbol = jit_->lookup(name);
    REQUIRE(static_cast<bool>(symbol));
    return symbol->toPtr<Kernel>();
  }

 private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
};

}  // namespace

TEST_CASE("every scalar lowering gives the registry's reference results bit for bit") {
  Jit jit;
  const std::vector<float> edges = edge_values();
  size_t ops = 0;
  for (const kiln::ir::OpDef* def : kiln::ir::registry().all()) {
    if (!kiln::codegen::llvm_ir::has_scalar_lowering(def->name)) continue;
    ++ops;
    const size_t arity = def->inputs.size();
    REQUIRE((arity == 1 || arity == 2));
    // Binary ops: every pair of edge values.
    std::vector<float> a, b;
    for (float x : edges)
      for (float y : (arity == 2 ? edges : std::vector<float>{0.f})) {
        a.push_back(x);
        b.push_back(y);
      }
    kiln::ir::test::OpTest t;
    const int64_t n = static_cast<int64_t>(a.size());
    std::vector<kiln::ir::Value*> inputs = {t.input("a", kiln::ir::test::f32({n}, a))};
    if (arity == 2) inputs.push_back(t.input("b", kiln::ir::test::f32({n}, b)));
    const Tensor reference = t.run1(t.node(def->name, inputs));
    std::vector<float> got(a.size());
    jit.compile(def->name, arity)(a.data(), b.data(), nullptr, got.data(), n);
    size_t mismatches = 0;
    for (int64_t i = 0; i < n; ++i) {
      const float want = reference.data<float>()[i];
      if (same_bits(got[static_cast<size_t>(i)], want)) continue;
      if (++mismatches <= 3)
        FAIL_CHECK(def->name << "(" << a[static_cast<size_t>(i)] << (arity == 2 ? ", " + std::to_string(b[static_cast<size_t>(i)]) : "")
                             << "): LLVM " << got[static_cast<size_t>(i)] << ", reference " << want);
    }
    CHECK_MESSAGE(mismatches == 0, def->name << ": " << mismatches << " of " << n << " values differ");
  }
  CHECK(ops >= 20);
}

TEST_CASE("Clip and the fused Clip select as kiln::rt::clip and the fused emitter's expression") {
  // They differ where lo > hi (Clip's bounds come from the model) and on NaN: both spelled out.
  Jit jit;
  Kernel clip = jit.compile("clip", 3, [](llvm::IRBuilder<>& b, llvm::Module&, const std::vector<llvm::Value*>& a) {
    return kiln::codegen::llvm_ir::lower_clip(b, a[0], a[1], a[2]);
  });
  Kernel fused = jit.compile("fused_clip", 3, [](llvm::IRBuilder<>& b, llvm::Module&, const std::vector<llvm::Value*>& a) {
    return kiln::codegen::llvm_ir::lower_fused_clip(b, a[0], a[1], a[2]);
  });
  const std::vector<float> edges = edge_values();
  const std::vector<float> bounds = {-1.f, 0.f, 6.f, -std::numeric_limits<float>::infinity(),
                                     std::numeric_limits<float>::quiet_NaN()};
  std::vector<float> x, lo, hi;
  for (float v : edges)
    for (float l : bounds)
      for (float h : bounds) {
        x.push_back(v);
        lo.push_back(l);
        hi.push_back(h);
      }
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<float> got_clip(x.size()), got_fused(x.size());
  clip(x.data(), lo.data(), hi.data(), got_clip.data(), n);
  fused(x.data(), lo.data(), hi.data(), got_fused.data(), n);
  size_t bad = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float want_clip = kiln::rt::clip(x[i], lo[i], hi[i]);
    const float want_fused = x[i] < lo[i] ? lo[i] : (x[i] > hi[i] ? hi[i] : x[i]);
    bad += !same_bits(got_clip[i], want_clip) + !same_bits(got_fused[i], want_fused);
  }
  CHECK(bad == 0);
}

TEST_CASE("Gelu's tanh form gives the registry's reference bit for bit") {
  Jit jit;
  kiln::ir::AttributeMap attrs;
  attrs.emplace("approximate", kiln::ir::Attribute(std::string("tanh")));
  Kernel gelu = jit.compile("gelu_tanh", 1, [&](llvm::IRBuilder<>& b, llvm::Module& m, const std::vector<llvm::Value*>& a) {
    return kiln::codegen::llvm_ir::lower_scalar(b, m, "Gelu", attrs, a);
  });
  const std::vector<float> x = edge_values();
  kiln::ir::test::OpTest t;
  const int64_t n = static_cast<int64_t>(x.size());
  const Tensor reference = t.run1(t.node("Gelu", {t.input("x", kiln::ir::test::f32({n}, x))}, attrs));
  std::vector<float> got(x.size());
  gelu(x.data(), nullptr, nullptr, got.data(), n);
  size_t bad = 0;
  for (int64_t i = 0; i < n; ++i) bad += !same_bits(got[static_cast<size_t>(i)], reference.data<float>()[i]);
  CHECK(bad == 0);
}
