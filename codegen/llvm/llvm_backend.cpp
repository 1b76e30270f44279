#include "codegen/llvm/llvm_backend.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/SubtargetFeature.h>
#include <llvm/TargetParser/Triple.h>

#include <fmt/format.h>

#include <functional>
#include <map>
#include <mutex>
#include <sstream>

#include "codegen/cpp/emitter.h"
#include "codegen/cpp/emitters/blocked.h"
#include "codegen/cpp/emitters/emitter_util.h"
#include "codegen/cpp/graph_plan.h"
#include "codegen/cpp/weight_blob.h"
#include "codegen/cpp/emitters/fused.h"
#include "codegen/cpp/emitters/pool.h"
#include "codegen/llvm/scalar_ir.h"
#include "ir/error.h"
#include "ir/ops/attention.h"
#include "ir/ops/fused.h"
#include "ir/ops/normalize.h"
#include "ir/ops/op_helpers.h"
#include "ir/op_registry.h"
#include "kiln/rt/attention.h"
#include "kiln/rt/conv.h"
#include "kiln/rt/conv_nchwc.h"
#include "kiln/rt/depthwise.h"
#include "kiln/rt/gemm.h"
#include "kiln/rt/model_host.h"
#include "kiln/rt/winograd.h"

namespace kiln::codegen::llvm_ir {

namespace {

using cpp::Location;

class Lowerer;

// int64_t values as LLVM's constant arrays take them; never empty (a zero-length global).
std::vector<uint64_t> as_u64(const std::vector<int64_t>& v) {
  std::vector<uint64_t> u(std::max<size_t>(v.size(), 1), 0);
  std::copy(v.begin(), v.end(), u.begin());
  return u;
}

// How an op becomes calls: why a node cannot (or ""), and the calls. The arithmetic is the
// runtime's, reached through kiln/rt/kernel_abi.h; the parameters come from the functions
// the C++ emitters use (codegen/cpp/emitters), so the two backends cannot drift apart.
struct OpLowering {
  std::string (*unsupported)(const ir::Node& node);
  void (*lower)(Lowerer& l, const ir::Node& node);
};

const std::map<std::string, OpLowering, std::less<>>& lowerings();

// The pieces of the run function while its nodes are lowered.
class Lowerer {
  llvm::Module& m_;  // first: the builder below is made from its context
  llvm::LLVMContext& c_;

 public:
  Lowerer(llvm::Module& m, llvm::Function* run, const cpp::Plan& plan, cpp::WeightBlob& weights,
          const cpp::EmitOptions& options)
      : m_(m), c_(m.getContext()), b(c_), plan_(plan), weights_(weights), options_(options) {
    A_ = run->getArg(0);
    W_ = run->getArg(1);
    in_ = run->getArg(2);
    out_ = run->getArg(3);
    pool_ = run->getArg(4);
    prof_ = run->getArg(5);
    error_ = run->getArg(6);
    entry_ = &run->getEntryBlock();
  }

  // Stack memory of the run function, in its entry block (static allocas).
  llvm::AllocaInst* entry_alloca(llvm::Type* type) {
    llvm::IRBuilder<> e(entry_, entry_->begin());
    return e.CreateAlloca(type);
  }

  // When `ok` (an i1) is false: the run stops, returning 1 with `message` (about `node`) in
  // *error; the lowering goes on in the block where it is true.
  void fail_unless(llvm::Value* ok, const ir::Node& node, const std::string& message) {
    llvm::Function* f = b.GetInsertBlock()->getParent();
    auto* bad = llvm::BasicBlock::Create(c_, "fail", f);
    auto* good = llvm::BasicBlock::Create(c_, "ok", f);
    b.CreateCondBr(ok, good, bad);
    b.SetInsertPoint(bad);
    const std::string text = fmt::format("node '{}' ({}): {}", node.name(), node.op(), message);
    b.CreateStore(b.CreateGlobalString(text, "kiln.error", 0, &m_), error_);
    b.CreateRet(b.getInt32(1));
    b.SetInsertPoint(good);
  }

  llvm::IRBuilder<> b;

  const cpp::EmitOptions& options() const { return options_; }
  llvm::Type* ptr_type() { return llvm::PointerType::get(c_, 0); }
  llvm::Value* i64(int64_t v) { return b.getInt64(static_cast<uint64_t>(v)); }
  llvm::Value* i32(int32_t v) { return b.getInt32(static_cast<uint32_t>(v)); }
  llvm::Value* f32(float v) { return llvm::ConstantFP::get(b.getFloatTy(), v); }
  llvm::Value* null() { return llvm::ConstantPointerNull::get(llvm::PointerType::get(c_, 0)); }
  llvm::Value* pool() { return pool_; }
  llvm::Value* prof() { return prof_; }

  // Where a value's bytes are in this run.
  llvm::Value* at(const Location& l) {
    switch (l.kind) {
      case Location::Input:
        return b.CreateLoad(ptr_type(), b.CreateConstGEP1_64(ptr_type(), in_, l.index));
      case Location::Output:
        return b.CreateLoad(ptr_type(), b.CreateConstGEP1_64(ptr_type(), out_, l.index));
      case Location::Weight:
        return b.CreateConstGEP1_64(b.getInt8Ty(), W_, l.offset);
      case Location::Arena:
        return b.CreateConstGEP1_64(b.getInt8Ty(), A_, l.offset);
      case Location::Widened:
        break;
    }
    fail("the LLVM backend reads fp32 weights only");
  }
  llvm::Value* value(const ir::Value* v) {
    auto it = plan_.locations.find(v);
    if (it == plan_.locations.end()) fail("value '{}' has no storage", v->name());
    return at(it->second);
  }
  llvm::Value* in(const ir::Node& n, size_t i) { return n.has_input(i) ? value(n.input(i)) : null(); }
  llvm::Value* out(const ir::Node& n, size_t i) { return value(n.output(i)); }
  llvm::Value* scratch(const ir::Node& n) {
    auto it = plan_.scratch.find(&n);
    return it == plan_.scratch.end() ? null() : b.CreateConstGEP1_64(b.getInt8Ty(), A_, it->second);
  }
  // Floats computed now (packed weights), appended to the weights as the C++ backend does.
  llvm::Value* weight_floats(const std::vector<float>& values) {
    return at(weights_.add_floats(values.data(), values.size()));
  }
  // A private constant int64_t array (a parameter struct's fields).
  llvm::Value* i64_array(const std::vector<int64_t>& values) {
    auto it = arrays_.find(values);
    if (it != arrays_.end()) return it->second;
    std::vector<uint64_t> u = as_u64(values);
    llvm::Constant* data = llvm::ConstantDataArray::get(c_, u);
    auto* g = new llvm::GlobalVariable(m_, data->getType(), true, llvm::GlobalValue::PrivateLinkage, data, "kiln.params");
    g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    return arrays_[values] = g;
  }

  // Calls the runtime's `fn`, declared from the arguments' types.
  llvm::Value* call(const char* fn, llvm::Type* ret, const std::vector<llvm::Value*>& args) {
    std::vector<llvm::Type*> types;
    for (llvm::Value* a : args) types.push_back(a->getType());
    llvm::FunctionCallee callee = m_.getOrInsertFunction(fn, llvm::FunctionType::get(ret, types, false));
    return b.CreateCall(callee, args);
  }
  void call(const char* fn, const std::vector<llvm::Value*>& args) { call(fn, b.getVoidTy(), args); }

  // kiln::rt::Epilogue's fields (fn, ctx, fn_is_clamp, clamp_lo, clamp_hi, residual, fn_is_relu)
  // for `node` as emit_epilogue declares them (codegen/cpp/emitters/fused.cpp): the function adds
  // the residual Z (input z_index) and the bias row of `row` elements (input bias_index), then
  // applies the fused activation; a residual add, Clip or Relu is also promised through the
  // flags, which kernels may apply in registers.
  std::vector<llvm::Value*> epilogue(const ir::Node& node, size_t z_index, size_t bias_index = SIZE_MAX,
                                     int64_t row = 0) {
    const bool has_z = node.has_input(z_index), has_bias = bias_index != SIZE_MAX && node.has_input(bias_index);
    llvm::Type* p = ptr_type();
    llvm::AllocaInst* refs = entry_alloca(llvm::ArrayType::get(p, 2));
    b.CreateStore(has_z ? in(node, z_index) : null(), b.CreateConstGEP2_32(refs->getAllocatedType(), refs, 0, 0));
    b.CreateStore(has_bias ? in(node, bias_index) : null(), b.CreateConstGEP2_32(refs->getAllocatedType(), refs, 0, 1));
    const ir::FusedActivation act = ir::fused_activation(node);
    const bool is_clip = act.op == "Clip" && act.clip_min <= act.clip_max, is_relu = act.op == "Relu";
    std::vector<llvm::Value*> fields = {epilogue_function(act, has_z, has_bias, row), refs, i32(0), f32(0.f), f32(0.f),
                                        null(), i32(0)};
    if (!has_bias && (is_clip || is_relu || (act.op == "none" && has_z))) {
      fields[2] = i32(is_clip ? 1 : 0);
      fields[3] = f32(is_clip ? act.clip_min : 0.f);
      fields[4] = f32(is_clip ? act.clip_max : 0.f);
      fields[5] = has_z ? in(node, z_index) : null();
      fields[6] = i32(is_relu ? 1 : 0);
    }
    return fields;
  }

  // A function of its own (the run function stays one straight block): `build` fills its body.
  llvm::Function* helper(const std::string& prefix, llvm::Type* ret, const std::vector<llvm::Type*>& params) {
    auto* f = llvm::Function::Create(llvm::FunctionType::get(ret, params, false), llvm::GlobalValue::InternalLinkage,
                                     fmt::format("{}{}", prefix, helpers_++), m_);
    f->setUWTableKind(llvm::UWTableKind::Async);
    return f;
  }

  // for (i = 0; i < n; ++i) body(i), in `f` at the builder `e`'s block; `e` ends after the loop.
  static void counted_loop(llvm::IRBuilder<>& e, llvm::Function* f, llvm::Value* n,
                           const std::function<void(llvm::Value*)>& body) {
    llvm::LLVMContext& c = e.getContext();
    llvm::BasicBlock* before = e.GetInsertBlock();
    auto* loop = llvm::BasicBlock::Create(c, "loop", f);
    auto* done = llvm::BasicBlock::Create(c, "done", f);
    e.CreateCondBr(e.CreateICmpSGT(n, e.getInt64(0)), loop, done);
    e.SetInsertPoint(loop);
    llvm::PHINode* i = e.CreatePHI(e.getInt64Ty(), 2);
    i->addIncoming(e.getInt64(0), before);
    body(i);
    llvm::Value* next = e.CreateAdd(i, e.getInt64(1), "", true, true);
    i->addIncoming(next, e.GetInsertBlock());
    e.CreateCondBr(e.CreateICmpSLT(next, n), loop, done);
    e.SetInsertPoint(done);
  }

  // The fused activation of `act` on x (none, Clip, or an op of scalar_ir.h).
  llvm::Value* activation(llvm::IRBuilder<>& e, const ir::FusedActivation& act, llvm::Value* x) {
    if (act.op == "none") return x;
    if (act.op == "Clip")
      return lower_fused_clip(e, x, llvm::ConstantFP::get(e.getFloatTy(), act.clip_min),
                              llvm::ConstantFP::get(e.getFloatTy(), act.clip_max));
    return lower_scalar(e, m_, act.op, act.attrs, {x});
  }

  // y = x (+ zr) (+ br) then the activation, over the block: Epilogue::fn(c, y, offset, n).
  llvm::Function* epilogue_function(const ir::FusedActivation& act, bool has_z, bool has_bias, int64_t row) {
    llvm::Type* p = ptr_type();
    llvm::Function* f = helper("kiln_ep", b.getVoidTy(), {p, p, b.getInt64Ty(), b.getInt64Ty()});
    llvm::IRBuilder<> e(llvm::BasicBlock::Create(c_, "entry", f));
    if (act.op == "none" && !has_z && !has_bias) {  // y[i] = y[i]
      e.CreateRetVoid();
      return f;
    }
    llvm::Value *refs = f->getArg(0), *y = f->getArg(1), *offset = f->getArg(2), *n = f->getArg(3);
    llvm::Value *zr = nullptr, *br = nullptr;
    if (has_z) zr = e.CreateGEP(e.getFloatTy(), e.CreateLoad(p, refs), offset);
    if (has_bias)
      br = e.CreateGEP(e.getFloatTy(), e.CreateLoad(p, e.CreateConstGEP1_64(p, refs, 1)),
                       e.CreateSRem(offset, e.getInt64(static_cast<uint64_t>(row))));
    counted_loop(e, f, n, [&](llvm::Value* i) {
      llvm::Value* addr = e.CreateGEP(e.getFloatTy(), y, i);
      llvm::Value* x = e.CreateLoad(e.getFloatTy(), addr);
      if (zr) x = e.CreateFAdd(x, e.CreateLoad(e.getFloatTy(), e.CreateGEP(e.getFloatTy(), zr, i)));
      if (br) x = e.CreateFAdd(x, e.CreateLoad(e.getFloatTy(), e.CreateGEP(e.getFloatTy(), br, i)));
      e.CreateStore(activation(e, act, x), addr);
    });
    e.CreateRetVoid();
    return f;
  }

  // y = f(inputs) elementwise over `dims` (row-major; each input read at its strides, 0 where it
  // broadcasts), in a function of its own whose loops LLVM vectorizes.
  void elementwise(const std::vector<int64_t>& dims, const std::vector<llvm::Value*>& inputs,
                   const std::vector<std::vector<int64_t>>& strides, llvm::Value* out,
                   const std::function<llvm::Value*(llvm::IRBuilder<>&, const std::vector<llvm::Value*>&)>& fn) {
    // Adjacent dims merge where every input steps through them as one.
    std::vector<int64_t> d;
    std::vector<std::vector<int64_t>> st(inputs.size());
    for (size_t k = 0; k < dims.size(); ++k) {
      bool merge = !d.empty();
      for (size_t j = 0; j < inputs.size() && merge; ++j) merge = st[j].back() == strides[j][k] * dims[k];
      if (merge) {
        d.back() *= dims[k];
        for (size_t j = 0; j < inputs.size(); ++j) st[j].back() = strides[j][k];
      } else {
        d.push_back(dims[k]);
        for (size_t j = 0; j < inputs.size(); ++j) st[j].push_back(strides[j][k]);
      }
    }
    if (d.empty()) {
      d.push_back(1);
      for (auto& s : st) s.push_back(0);
    }
    llvm::Type* p = ptr_type();
    std::vector<llvm::Type*> params(inputs.size() + 1, p);
    llvm::Function* f = helper("kiln_elementwise", b.getVoidTy(), params);
    llvm::IRBuilder<> e(llvm::BasicBlock::Create(c_, "entry", f));
    std::function<void(size_t, llvm::Value*, std::vector<llvm::Value*>)> level = [&](size_t k, llvm::Value* out_at,
                                                                                     std::vector<llvm::Value*> at) {
      counted_loop(e, f, e.getInt64(static_cast<uint64_t>(d[k])), [&](llvm::Value* i) {
        llvm::Value* o = e.CreateAdd(e.CreateMul(out_at, e.getInt64(static_cast<uint64_t>(d[k]))), i);
        std::vector<llvm::Value*> next;
        for (size_t j = 0; j < at.size(); ++j)
          next.push_back(e.CreateAdd(at[j], e.CreateMul(i, e.getInt64(static_cast<uint64_t>(st[j][k])))));
        if (k + 1 < d.size()) return level(k + 1, o, next);
        std::vector<llvm::Value*> values;
        for (size_t j = 0; j < next.size(); ++j)
          values.push_back(e.CreateLoad(e.getFloatTy(), e.CreateGEP(e.getFloatTy(), f->getArg(j + 1), next[j])));
        e.CreateStore(fn(e, values), e.CreateGEP(e.getFloatTy(), f->getArg(0), o));
      });
    };
    level(0, e.getInt64(0), std::vector<llvm::Value*>(inputs.size(), e.getInt64(0)));
    e.CreateRetVoid();
    std::vector<llvm::Value*> args = {out};
    args.insert(args.end(), inputs.begin(), inputs.end());
    b.CreateCall(f, args);
  }

  llvm::Module& module() { return m_; }

 private:
  const cpp::Plan& plan_;
  cpp::WeightBlob& weights_;
  cpp::EmitOptions options_;
  llvm::Value *A_, *W_, *in_, *out_, *pool_, *prof_, *error_;
  llvm::BasicBlock* entry_ = nullptr;
  std::map<std::vector<int64_t>, llvm::Value*> arrays_;
  size_t helpers_ = 0;
};

// ---- the ops ----

std::string f32_only(const ir::Node& node) { return cpp::require_f32(node); }

void lower_reorder(Lowerer& l, const ir::Node& node, bool to_blocked) {
  const std::vector<int64_t> s = cpp::dims_of(node.input(0));
  const int64_t c = to_blocked ? s[1] : s[1] * s[4];
  l.call(to_blocked ? "kiln_abi_nchw_to_nchwc_f32" : "kiln_abi_nchwc_to_nchw_f32",
         {l.i64(s[0]), l.i64(c), l.i64(s[2] * s[3]), l.in(node, 0), l.out(node, 0), l.pool()});
}

std::string unsupported_conv_nchwc(const ir::Node& node) {
  if (std::string r = cpp::require_f32(node); !r.empty()) return r;
  if (!cpp::is_f32_constant(node.input(1)) || (node.has_input(2) && !cpp::is_f32_constant(node.input(2))))
    return "compiled kiln.ConvNchwc needs constant f32 weights and bias";
  if (!cpp::nchwc_conv_params(node) || !ir::store_activation(ir::fused_activation(node)))
    return "compiled kiln.ConvNchwc runs convolutions without dilation, group 1, on blocks of 16 channels, with "
           "the activations none, Relu or Clip";
  return "";
}

void lower_conv_nchwc(Lowerer& l, const ir::Node& node) {
  const kiln::rt::ConvNchwcParams p = *cpp::nchwc_conv_params(node);
  std::vector<float> packed(kiln::rt::conv_nchwc_packed_floats(p));
  kiln::rt::conv_nchwc_pack_weights(p, node.input(1)->constant().data<float>(), packed.data());
  const kiln::rt::StoreActivation a = *ir::store_activation(ir::fused_activation(node));
  llvm::Value* params = l.i64_array({p.N, p.C, p.H, p.W, p.M, p.KH, p.KW, p.OH, p.OW, p.stride_h, p.stride_w,
                                     p.pad_top, p.pad_left, p.x_nchw ? 1 : 0});
  l.call("kiln_abi_conv_nchwc_f32", {params, l.in(node, 0), l.weight_floats(packed), l.in(node, 2), l.in(node, 3),
                                     l.i32(static_cast<int32_t>(a.kind)), l.f32(a.lo), l.f32(a.hi), l.out(node, 0),
                                     l.pool()});
}

std::string unsupported_maxpool_nchwc(const ir::Node& node) {
  if (std::string r = cpp::require_f32(node); !r.empty()) return r;
  if (node.ints("kernel_shape").size() != 2) return "compiled kiln.MaxPoolNchwc pools over 2-D windows";
  return "";
}

void lower_maxpool_nchwc(Lowerer& l, const ir::Node& node) {
  l.call("kiln_abi_maxpool_nchwc_f32",
         {l.i64_array(cpp::nchwc_pool_fields(node)), l.in(node, 0), l.out(node, 0), l.pool()});
}

// Whether the LLVM backend applies the fused activation of `node`: none, Clip, or an op of
// scalar_ir.h.
std::string unsupported_activation(const ir::Node& node) {
  const std::string act = ir::fused_activation(node).op;
  if (act == "none" || act == "Clip" || has_scalar_lowering(act)) return "";
  return fmt::format("no LLVM lowering of the fused activation {} yet", act);
}

// Conv and kiln.FusedConv: Winograd or the packed im2col GEMM, as emit_conv2d picks, with the
// epilogue of emit_conv (residual Z at input 3, then the activation).
std::string unsupported_conv2d(const ir::Node& node) {
  if (std::string r = cpp::unsupported_conv2d(node); !r.empty()) return r;
  if (node.op() == "kiln.FusedConv")
    if (std::string r = unsupported_activation(node); !r.empty()) return r;
  return "";
}

void lower_conv2d(Lowerer& l, const ir::Node& node) {
  const kiln::rt::Conv2dParams p = cpp::conv2d_params(node);
  llvm::Value* params = l.i64_array(cpp::conv_fields(p));
  const std::vector<llvm::Value*> ep =
      node.op() == "kiln.FusedConv"
          ? l.epilogue(node, 3)
          : std::vector<llvm::Value*>{l.null(), l.null(), l.i32(0), l.f32(0.f), l.f32(0.f), l.null(), l.i32(0)};
  const float* w = node.input(1)->constant().data<float>();
  if (int tile = cpp::conv2d_winograd_tile(node, l.options())) {
    std::vector<float> packed(kiln::rt::winograd_packed_weight_floats(p, tile));
    kiln::rt::winograd_pack_weights(p, tile, w, packed.data());
    std::vector<llvm::Value*> args = {params, l.i64(tile), l.in(node, 0), l.weight_floats(packed), l.in(node, 2),
                                      l.out(node, 0), l.scratch(node)};
    args.insert(args.end(), ep.begin(), ep.end());
    args.push_back(l.pool());
    l.call("kiln_abi_winograd_conv2d_f32", args);
    return;
  }
  llvm::Value* weights;
  const bool packed_w = cpp::conv2d_packs_weights(node, 1);
  if (packed_w) {
    std::vector<float> packed(kiln::rt::conv2d_packed_weight_floats(p));
    kiln::rt::conv2d_pack_weights(p, w, packed.data());
    weights = l.weight_floats(packed);
  } else {
    weights = l.in(node, 1);
  }
  std::vector<llvm::Value*> args = {params, l.in(node, 0), weights, l.i32(packed_w ? 1 : 0), l.in(node, 2),
                                    l.out(node, 0), l.scratch(node)};
  args.insert(args.end(), ep.begin(), ep.end());
  args.push_back(l.pool());
  l.call("kiln_abi_conv2d_f32_prepacked", args);
}

std::string unsupported_global_avg(const ir::Node& node) {
  if (std::string r = cpp::require_f32(node); !r.empty()) return r;
  return node.input(0)->shape().rank() < 3 ? "GlobalAveragePool needs an input of rank 3 or more" : "";
}

void lower_global_avg(Lowerer& l, const ir::Node& node) {
  const std::vector<int64_t> x = cpp::dims_of(node.input(0));
  int64_t spatial = 1;
  for (size_t i = 2; i < x.size(); ++i) spatial *= x[i];
  l.call("kiln_abi_global_avgpool_f32", {l.i64(x[0] * x[1]), l.i64(spatial), l.in(node, 0), l.out(node, 0), l.pool()});
}

std::string unsupported_pool(const ir::Node& node) {
  if (std::string r = cpp::require_f32(node); !r.empty()) return r;
  if (!cpp::pool2d_fields(node)) return "the LLVM backend runs the 2-D f32 pooling kernels only (no Indices output)";
  return "";
}

void lower_pool(Lowerer& l, const ir::Node& node) {
  llvm::Value* params = l.i64_array(*cpp::pool2d_fields(node));
  if (node.op() == "MaxPool")
    l.call("kiln_abi_maxpool2d_f32", {params, l.in(node, 0), l.out(node, 0), l.pool()});
  else
    l.call("kiln_abi_avgpool2d_f32",
           {params, l.i32(node.i("count_include_pad") ? 1 : 0), l.in(node, 0), l.out(node, 0), l.pool()});
}

std::string unsupported_softmax(const ir::Node& node) {
  if (std::string r = cpp::require_f32(node); !r.empty()) return r;
  return node.input(0)->shape().rank() == 0 ? "a scalar input is not supported" : "";
}

void lower_softmax(Lowerer& l, const ir::Node& node) {
  const std::vector<int64_t> x = cpp::dims_of(node.input(0));
  const size_t axis = static_cast<size_t>(*ir::normalize_axis(node.i("axis"), static_cast<int64_t>(x.size())));
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < axis; ++i) outer *= x[i];
  for (size_t i = axis + 1; i < x.size(); ++i) inner *= x[i];
  l.call("kiln_abi_softmax_f32", {l.i64(outer), l.i64(x[axis]), l.i64(inner), l.in(node, 0), l.out(node, 0),
                                  l.i32(node.op() == "LogSoftmax" ? 1 : 0)});
}

std::string unsupported_gemm(const ir::Node& node) {
  if (std::string r = cpp::require_f32(node); !r.empty()) return r;
  if (node.input(0)->shape().rank() != 2 || node.input(1)->shape().rank() != 2) return "Gemm takes matrices";
  if (node.op() == "kiln.FusedGemm") return unsupported_activation(node);
  return "";
}

// B (K x N, transposed as stored when trans) as gemm_b_operand gives it: packed now when it is
// a weight; its pointer and the ld, trans and packed fields.
std::tuple<llvm::Value*, int64_t, bool, bool> gemm_b(Lowerer& l, const ir::Node& node, bool trans, int64_t K, int64_t N) {
  if (!cpp::is_f32_constant(node.input(1))) return {l.in(node, 1), trans ? K : N, trans, false};
  std::vector<float> w(kiln::rt::gemm_f32_packed_b_floats(K, N));
  kiln::rt::gemm_f32_pack_b(trans, K, N, node.input(1)->constant().data<float>(), trans ? K : N, w.data());
  return {l.weight_floats(w), 0, false, true};
}

void call_gemm(Lowerer& l, const ir::Node& node, int64_t M, int64_t N, int64_t K, float alpha, int64_t lda, bool ta,
               bool tb, float beta, const std::vector<llvm::Value*>& ep) {
  auto [bp, ldb, b_trans, packed] = gemm_b(l, node, tb, K, N);
  std::vector<llvm::Value*> args = {
      l.i64_array({M, N, K, lda, ta ? 1 : 0, ldb, b_trans ? 1 : 0, packed ? 1 : 0, N}), l.f32(alpha), l.in(node, 0), bp,
      l.f32(beta), l.out(node, 0)};
  args.insert(args.end(), ep.begin(), ep.end());
  args.push_back(l.pool());
  l.call("kiln_abi_gemm_f32", args);
}

// Gemm and kiln.FusedGemm as emit_gemm (codegen/cpp/emitters/emitter_util.cpp): C broadcast
// into Y, then Y = alpha A B + beta Y, with kiln.FusedGemm's epilogue (residual at input 3).
void lower_gemm(Lowerer& l, const ir::Node& node) {
  const std::vector<llvm::Value*> ep =
      node.op() == "kiln.FusedGemm"
          ? l.epilogue(node, 3)
          : std::vector<llvm::Value*>{l.null(), l.null(), l.i32(0), l.f32(0.f), l.f32(0.f), l.null(), l.i32(0)};
  const std::vector<int64_t> a = cpp::dims_of(node.input(0)), b = cpp::dims_of(node.input(1));
  const bool ta = node.i("transA") != 0, tb = node.i("transB") != 0;
  const int64_t M = ta ? a[1] : a[0], K = ta ? a[0] : a[1], N = tb ? b[0] : b[1];
  const float beta = node.f("beta");
  const bool has_c = node.has_input(2) && beta != 0.0f;
  if (has_c) {
    const std::vector<int64_t> dims = {M, N};
    l.call("kiln_abi_strided_copy_bytes",
           {l.i64(4), l.i64(2), l.i64_array(dims), l.in(node, 2),
            l.i64_array(ir::broadcast_strides(cpp::dims_of(node.input(2)), dims)), l.i64(0), l.out(node, 0)});
  }
  call_gemm(l, node, M, N, K, node.f("alpha"), ta ? M : K, ta, tb, has_c ? beta : 0.0f, ep);
}

// MatMul with one B for every row of A (B [K, N]), and kiln.FusedMatMul (bias row at input 2,
// residual at input 3), as emit_matmul and the fused emitter run them: one GEMM over A's rows.
std::string unsupported_matmul(const ir::Node& node) {
  if (std::string r = cpp::require_f32(node); !r.empty()) return r;
  const std::vector<int64_t> a = cpp::dims_of(node.input(0)), b = cpp::dims_of(node.input(1));
  if (a.size() < 2 || b.size() != 2) return "the LLVM backend multiplies a matrix (or a stack of them) by one B";
  if (node.op() == "kiln.FusedMatMul") return unsupported_activation(node);
  return "";
}

void lower_matmul(Lowerer& l, const ir::Node& node) {
  const std::vector<int64_t> a = cpp::dims_of(node.input(0)), b = cpp::dims_of(node.input(1));
  const int64_t K = b[0], N = b[1], rows = ir::numel(a) / K;
  const std::vector<llvm::Value*> ep =
      node.op() == "kiln.FusedMatMul"
          ? l.epilogue(node, 3, 2, N)
          : std::vector<llvm::Value*>{l.null(), l.null(), l.i32(0), l.f32(0.f), l.f32(0.f), l.null(), l.i32(0)};
  call_gemm(l, node, rows, N, K, 1.0f, K, false, false, 0.0f, ep);
}

// Elementwise ops with a scalar lowering (scalar_ir.h), f32, inputs broadcast as ONNX does.
std::string unsupported_elementwise(const ir::Node& node) {
  if (std::string r = cpp::require_f32(node); !r.empty()) return r;
  if (node.output(0)->dtype() != ir::DType::F32) return "the LLVM backend computes f32 results only";
  if (!has_scalar_lowering(node.op())) return "no LLVM lowering yet (the C++ backend compiles it)";
  return "";
}

void lower_elementwise(Lowerer& l, const ir::Node& node) {
  const std::vector<int64_t> dims = cpp::dims_of(node.output(0));
  std::vector<llvm::Value*> inputs;
  std::vector<std::vector<int64_t>> strides;
  for (size_t i = 0; i < node.num_inputs(); ++i) {
    inputs.push_back(l.in(node, i));
    strides.push_back(ir::broadcast_strides(cpp::dims_of(node.input(i)), dims));
  }
  llvm::Module& m = l.module();
  const std::string op = node.op();
  const ir::AttributeMap attrs = node.attrs();
  l.elementwise(dims, inputs, strides, l.out(node, 0),
                [&](llvm::IRBuilder<>& e, const std::vector<llvm::Value*>& v) { return lower_scalar(e, m, op, attrs, v); });
}

// Clip: the bounds from inputs 1 and 2 (read when the model runs), else the float range.
void lower_clip_node(Lowerer& l, const ir::Node& node) {
  const std::vector<int64_t> dims = cpp::dims_of(node.output(0));
  std::vector<llvm::Value*> inputs = {l.in(node, 0)};
  std::vector<std::vector<int64_t>> strides = {ir::broadcast_strides(dims, dims)};
  for (size_t i : {size_t{1}, size_t{2}})
    if (node.has_input(i)) {
      inputs.push_back(l.in(node, i));
      strides.push_back(std::vector<int64_t>(dims.size(), 0));
    }
  const bool has_lo = node.has_input(1), has_hi = node.has_input(2);
  l.elementwise(dims, inputs, strides, l.out(node, 0), [&](llvm::IRBuilder<>& e, const std::vector<llvm::Value*>& v) {
    llvm::Value* lo = has_lo ? v[1] : llvm::ConstantFP::get(e.getFloatTy(), std::numeric_limits<float>::lowest());
    llvm::Value* hi = has_hi ? v[has_lo ? 2 : 1] : llvm::ConstantFP::get(e.getFloatTy(), std::numeric_limits<float>::max());
    return lower_clip(e, v[0], lo, hi);
  });
}

// The depthwise fusions, as their emitters run them (codegen/cpp/emitters/fused.cpp): the
// kernels' parameters and activations, weights packed now where they are constants.
std::vector<llvm::Value*> store_activation_args(Lowerer& l, const ir::Node& node, const char* prefix) {
  const kiln::rt::StoreActivation a = *ir::store_activation(ir::fused_activation(node, prefix));
  return {l.i32(static_cast<int32_t>(a.kind)), l.f32(a.lo), l.f32(a.hi)};
}

void lower_depthwise_nchwc(Lowerer& l, const ir::Node& node) {
  const kiln::rt::Conv2dParams p = *cpp::nchwc_depthwise_params(node);
  std::vector<llvm::Value*> args = {l.i64_array(cpp::conv_fields(p)), l.in(node, 0), l.in(node, 1), l.in(node, 2)};
  const std::vector<llvm::Value*> act = store_activation_args(l, node, "activation");
  args.insert(args.end(), act.begin(), act.end());
  args.insert(args.end(), {l.out(node, 0), l.pool()});
  l.call("kiln_abi_depthwise3x3_nchw16c_f32", args);
}

std::string unsupported_conv_depthwise(const ir::Node& node) {
  kiln::rt::ExpandDepthwiseParams p{};
  return cpp::conv_depthwise_params(node, p);
}

void lower_conv_depthwise(Lowerer& l, const ir::Node& node) {
  kiln::rt::ExpandDepthwiseParams p{};
  cpp::conv_depthwise_params(node, p);
  llvm::Value* params = l.i64_array({p.N, p.C, p.H, p.W, p.M, p.stride, p.OH, p.OW, p.x_nchw16c, p.y_nchw16c});
  const std::vector<llvm::Value*> act1 = store_activation_args(l, node, "expand_activation"),
                                  act2 = store_activation_args(l, node, "activation");
  std::vector<llvm::Value*> args = {params, l.in(node, 0)};
  if (cpp::conv_depthwise_packs_weights(node, 1)) {
    auto data = [&](size_t i) { return node.has_input(i) ? node.input(i)->constant().data<float>() : nullptr; };
    std::vector<float> packed(static_cast<size_t>(kiln::rt::expand_depthwise3x3_packed_floats(p)));
    kiln::rt::expand_depthwise3x3_pack(p, data(1), data(2), data(3), data(4), packed.data());
    args.push_back(l.weight_floats(packed));
    args.insert(args.end(), act1.begin(), act1.end());
    args.insert(args.end(), act2.begin(), act2.end());
    args.insert(args.end(), {l.out(node, 0), l.pool()});
    l.call("kiln_abi_expand_depthwise3x3_f32_prepacked", args);
    return;
  }
  args.insert(args.end(), {l.in(node, 1), l.in(node, 2)});
  args.insert(args.end(), act1.begin(), act1.end());
  args.insert(args.end(), {l.in(node, 3), l.in(node, 4)});
  args.insert(args.end(), act2.begin(), act2.end());
  args.insert(args.end(), {l.out(node, 0), l.pool()});
  l.call("kiln_abi_expand_depthwise3x3_f32", args);
}

std::string unsupported_depthwise_conv(const ir::Node& node) {
  kiln::rt::DepthwisePointwiseParams p{};
  return cpp::depthwise_conv_params(node, p);
}

void lower_depthwise_conv(Lowerer& l, const ir::Node& node) {
  kiln::rt::DepthwisePointwiseParams p{};
  cpp::depthwise_conv_params(node, p);
  const std::vector<llvm::Value*> act1 = store_activation_args(l, node, "activation"),
                                  act2 = store_activation_args(l, node, "project_activation");
  std::vector<llvm::Value*> args = {l.i64_array({p.N, p.C, p.H, p.W, p.stride, p.OH, p.OW, p.M}), l.in(node, 0),
                                    l.in(node, 1), l.in(node, 2)};
  args.insert(args.end(), act1.begin(), act1.end());
  args.insert(args.end(), {l.in(node, 3), l.in(node, 4)});
  args.insert(args.end(), act2.begin(), act2.end());
  args.insert(args.end(), {l.out(node, 0), l.pool()});
  l.call("kiln_abi_depthwise3x3_pointwise_f32", args);
}

// kiln.Elementwise: the chain's steps ("Op i0 t1": inputs i, earlier steps t) in one loop; an
// input of one element is read at [0] by every step, as emit_elementwise_chain reads it.
std::string unsupported_chain(const ir::Node& node) {
  if (std::string r = cpp::require_f32(node); !r.empty()) return r;
  for (const std::string& step : node.attr("steps").strings()) {
    const std::string op = step.substr(0, step.find(' '));
    if (!has_scalar_lowering(op)) return fmt::format("no LLVM lowering of {} in the fused chain yet", op);
  }
  return "";
}

void lower_chain(Lowerer& l, const ir::Node& node) {
  const int64_t n = ir::numel(cpp::dims_of(node.output(0)));
  std::vector<llvm::Value*> inputs;
  std::vector<std::vector<int64_t>> strides;
  for (size_t k = 0; k < node.num_inputs(); ++k) {
    inputs.push_back(l.in(node, k));
    strides.push_back({node.input(k)->shape().product() == ir::Dim(1) ? 0 : 1});
  }
  std::vector<std::pair<std::string, std::vector<std::string>>> steps;
  for (const std::string& text : node.attr("steps").strings()) {
    std::istringstream in(text);
    std::string op, arg;
    in >> op;
    std::vector<std::string> args;
    while (in >> arg) args.push_back(arg);
    steps.emplace_back(op, args);
  }
  llvm::Module& m = l.module();
  l.elementwise({n}, inputs, strides, l.out(node, 0), [&](llvm::IRBuilder<>& e, const std::vector<llvm::Value*>& x) {
    std::vector<llvm::Value*> t;
    for (const auto& [op, args] : steps) {
      std::vector<llvm::Value*> v;
      for (const std::string& a : args) v.push_back((a[0] == 'i' ? x : t).at(std::stoul(a.substr(1))));
      t.push_back(lower_scalar(e, m, op, {}, v));
    }
    return t.back();
  });
}

// LayerNormalization and RMSNormalization, f32, as emit_layer_norm (emitters/normalize.cpp).
std::string unsupported_layer_norm(const ir::Node& node) {
  if (std::string r = cpp::unsupported_layer_norm(node); !r.empty()) return r;
  return cpp::require_f32(node);
}

void lower_layer_norm(Lowerer& l, const ir::Node& node) {
  const std::vector<int64_t> x = cpp::dims_of(node.input(0));
  const int64_t axis = ir::norm_axis(node, static_cast<int64_t>(x.size()));
  int64_t rows = 1, len = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(x.size()); ++d) (d < axis ? rows : len) *= x[static_cast<size_t>(d)];
  if (node.op() == "RMSNormalization") {
    l.call("kiln_abi_rms_norm_f32", {l.i64(rows), l.i64(len), l.in(node, 0), l.in(node, 1), l.f32(node.f("epsilon")),
                                     l.out(node, 0)});
    return;
  }
  auto out_or_null = [&](size_t i) { return node.num_outputs() > i && node.output(i) ? l.out(node, i) : l.null(); };
  l.call("kiln_abi_layer_norm_f32", {l.i64(rows), l.i64(len), l.in(node, 0), l.in(node, 1), l.in(node, 2),
                                     l.f32(node.f("epsilon")), l.out(node, 0), out_or_null(1), out_or_null(2)});
}

// Attention, f32, without a past, padding lengths or outputs beyond Y: emit (emitters/attention.cpp).
std::string unsupported_attention(const ir::Node& node) {
  for (size_t i = 0; i < node.num_inputs(); ++i) {
    const ir::Value* v = node.input(i);
    const bool mask = i == ir::kAttnMask && v && v->dtype() == ir::DType::Bool;
    if (v && v->dtype() != ir::DType::F32 && !mask)
      return fmt::format("input '{}' is {}; the LLVM backend compiles f32 attention", v->name(), ir::dtype_name(v->dtype()));
  }
  if (ir::attention_needs_present(node) || node.num_outputs() > 1 || node.has_input(ir::kAttnNonpad) ||
      node.has_input(ir::kAttnPastKey))
    return "the LLVM backend compiles attention without a past, padding lengths or extra outputs";
  return "";
}

void lower_attention(Lowerer& l, const ir::Node& node) {
  std::vector<std::vector<int64_t>> dims;
  for (size_t i = 0; i < node.num_inputs(); ++i)
    dims.push_back(node.has_input(i) ? cpp::dims_of(node.input(i)) : std::vector<int64_t>{});
  const kiln::rt::AttentionParams p = ir::attention_params(node, dims, false);
  std::vector<int64_t> f = {p.batch, p.q_heads, p.kv_heads, p.q_len, p.kv_len, p.head_dim, p.v_head_dim};
  for (const kiln::rt::AttentionLayout* lay : {&p.q, &p.k, &p.v, &p.y}) f.insert(f.end(), {lay->batch, lay->head, lay->seq});
  f.insert(f.end(), {p.mask.stride[0], p.mask.stride[1], p.mask.stride[2], p.mask.stride[3], p.mask.keys,
                     p.mask.causal_offset});
  const bool has_mask = node.has_input(ir::kAttnMask);
  const int32_t mask_kind = !has_mask ? 0 : node.input(ir::kAttnMask)->dtype() == ir::DType::Bool ? 1 : 2;
  llvm::Value* done = l.call("kiln_abi_attention_f32", l.b.getInt32Ty(),
                             {l.i64_array(f), l.i32(p.mask.causal ? 1 : 0), l.i32(mask_kind),
                              has_mask ? l.in(node, ir::kAttnMask) : l.null(), l.f32(p.scale), l.f32(p.softcap),
                              l.in(node, ir::kAttnQ), l.in(node, ir::kAttnK), l.in(node, ir::kAttnV), l.out(node, 0),
                              l.pool()});
  l.fail_unless(l.b.CreateICmpNE(done, l.i32(0)), node, "out of memory");
}

const std::map<std::string, OpLowering, std::less<>>& lowerings() {
  static const std::map<std::string, OpLowering, std::less<>> table = [] {
    std::map<std::string, OpLowering, std::less<>> t = {
        {"kiln.ToNchwc", {f32_only, [](Lowerer& l, const ir::Node& n) { lower_reorder(l, n, true); }}},
        {"kiln.FromNchwc", {f32_only, [](Lowerer& l, const ir::Node& n) { lower_reorder(l, n, false); }}},
        {"kiln.ConvNchwc", {unsupported_conv_nchwc, lower_conv_nchwc}},
        {"kiln.MaxPoolNchwc", {unsupported_maxpool_nchwc, lower_maxpool_nchwc}},
        {"kiln.DepthwiseConvNchwc", {cpp::unsupported_depthwise, lower_depthwise_nchwc}},
        {"Conv", {unsupported_conv2d, lower_conv2d}},
        {"kiln.FusedConv", {unsupported_conv2d, lower_conv2d}},
        {"GlobalAveragePool", {unsupported_global_avg, lower_global_avg}},
        {"MaxPool", {unsupported_pool, lower_pool}},
        {"AveragePool", {unsupported_pool, lower_pool}},
        {"Softmax", {unsupported_softmax, lower_softmax}},
        {"LogSoftmax", {unsupported_softmax, lower_softmax}},
        {"Gemm", {unsupported_gemm, lower_gemm}},
        {"kiln.FusedGemm", {unsupported_gemm, lower_gemm}},
        {"MatMul", {unsupported_matmul, lower_matmul}},
        {"kiln.FusedMatMul", {unsupported_matmul, lower_matmul}},
        {"Clip", {f32_only, lower_clip_node}},
        {"kiln.FusedConvDepthwise", {unsupported_conv_depthwise, lower_conv_depthwise}},
        {"kiln.FusedConvDepthwiseNchwc", {unsupported_conv_depthwise, lower_conv_depthwise}},
        {"kiln.FusedDepthwiseConv", {unsupported_depthwise_conv, lower_depthwise_conv}},
        {"kiln.Elementwise", {unsupported_chain, lower_chain}},
        {"LayerNormalization", {unsupported_layer_norm, lower_layer_norm}},
        {"RMSNormalization", {unsupported_layer_norm, lower_layer_norm}},
        {"Attention", {unsupported_attention, lower_attention}},
    };
    for (const ir::OpDef* def : ir::registry().all())
      if (has_scalar_lowering(def->name) && !def->scalar_expr.empty() && def->inputs.size() <= 2)
        t.emplace(def->name, OpLowering{unsupported_elementwise, lower_elementwise});
    return t;
  }();
  return table;
}

// ---- the module ----

void initialize_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
  });
}

std::unique_ptr<llvm::TargetMachine> target_machine(const LlvmOptions& options) {
  initialize_llvm();
  const std::string triple = llvm::Triple::normalize(options.triple);
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) fail("the LLVM backend cannot build for {}: {}", options.triple, error);
  const bool x86 = llvm::Triple(triple).getArch() == llvm::Triple::x86_64;
  std::string cpu = x86 ? "x86-64" : "generic", features;
  if (options.cpu == "native") {
    cpu = llvm::sys::getHostCPUName().str();
    llvm::SubtargetFeatures f;
    for (const auto& [name, on] : llvm::sys::getHostCPUFeatures()) f.AddFeature(name, on);
    features = f.getString();
  } else if (options.cpu != "generic" && !options.cpu.empty()) {
    cpu = options.cpu;  // x86-64-v2, x86-64-v3: LLVM's names for the same levels
  }
  llvm::TargetOptions to;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(triple, cpu, features, to, llvm::Reloc::PIC_,
                                                                      std::nullopt, llvm::CodeGenOptLevel::Default));
  if (!tm) fail("the LLVM backend cannot build for {} (cpu {})", options.triple, cpu);
  return tm;
}

void optimize(llvm::Module& m, llvm::TargetMachine& tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2);
  mpm.run(m, mam);
}

void emit(llvm::Module& m, llvm::TargetMachine& tm, const std::filesystem::path& object) {
  std::string error;
  llvm::raw_string_ostream es(error);
  if (llvm::verifyModule(m, &es)) fail("the LLVM backend made an invalid module: {}", error);
  std::error_code ec;
  llvm::raw_fd_ostream out(object.string(), ec, llvm::sys::fs::OF_None);
  if (ec) fail("{}: cannot write: {}", object.string(), ec.message());
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, out, nullptr, llvm::CodeGenFileType::ObjectFile))
    fail("the LLVM backend cannot write objects for {}", m.getTargetTriple());
  pm.run(m);
  out.close();
  if (out.has_error()) fail("{}: cannot write: {}", object.string(), out.error().message());
}

// Module-level constants of the C API's table.
class Table {
 public:
  explicit Table(llvm::Module& m) : m_(m), c_(m.getContext()) {}
  llvm::Constant* str(const std::string& s) {
    llvm::Constant* data = llvm::ConstantDataArray::getString(c_, s, true);
    auto* g = new llvm::GlobalVariable(m_, data->getType(), true, llvm::GlobalValue::PrivateLinkage, data, "kiln.str");
    g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    return g;
  }
  llvm::Constant* i64s(const std::vector<int64_t>& v) {
    std::vector<uint64_t> u = as_u64(v);
    llvm::Constant* data = llvm::ConstantDataArray::get(c_, u);
    return new llvm::GlobalVariable(m_, data->getType(), true, llvm::GlobalValue::PrivateLinkage, data, "kiln.ints");
  }
  llvm::Constant* strs(const std::vector<std::string>& v) {
    std::vector<llvm::Constant*> items;
    for (const std::string& s : v) items.push_back(str(s));
    items.push_back(llvm::ConstantPointerNull::get(ptr()));
    auto* type = llvm::ArrayType::get(ptr(), items.size());
    return new llvm::GlobalVariable(m_, type, true, llvm::GlobalValue::PrivateLinkage,
                                    llvm::ConstantArray::get(type, items), "kiln.strs");
  }
  llvm::PointerType* ptr() { return llvm::PointerType::get(c_, 0); }
  llvm::Constant* u64(uint64_t v) { return llvm::ConstantInt::get(llvm::Type::getInt64Ty(c_), v); }

 private:
  llvm::Module& m_;
  llvm::LLVMContext& c_;
};

// The C API: NAME_x(args) returns kiln_host_x(&desc, args). Types: p pointer, l 64-bit
// (size_t), i int, v void; the first letter is the return type.
struct ApiFunction {
  const char* suffix;
  const char* types;
};
constexpr ApiFunction kApi[] = {
    {"create", "pp"},          {"run", "ippp"},            {"run_checked", "ipplpl"}, {"set_input_shape", "iplip"},
    {"input_shape", "ppl"},    {"output_shape", "ppl"},    {"error", "pp"},           {"destroy", "vp"},
    {"num_inputs", "l"},       {"num_outputs", "l"},       {"input_name", "pl"},      {"input_dtype", "il"},
    {"input_rank", "il"},      {"input_dims", "pl"},       {"input_min_dims", "pl"},  {"input_dim_steps", "pl"},
    {"output_name", "pl"},     {"output_dtype", "il"},     {"output_rank", "il"},     {"output_dims", "pl"},
    {"arena_size", "l"},       {"set_profiling", "ipi"},   {"num_nodes", "l"},        {"node_name", "pl"},
    {"node_op", "pl"},         {"node_time", "iplpp"},
};

llvm::Type* api_type(llvm::LLVMContext& c, char t) {
  switch (t) {
    case 'p':
      return llvm::PointerType::get(c, 0);
    case 'l':
      return llvm::Type::getInt64Ty(c);
    case 'i':
      return llvm::Type::getInt32Ty(c);
    default:
      return llvm::Type::getVoidTy(c);
  }
}

void add_api(llvm::Module& m, llvm::GlobalVariable* desc, const std::string& name) {
  llvm::LLVMContext& c = m.getContext();
  for (const ApiFunction& f : kApi) {
    const std::string types = f.types;
    std::vector<llvm::Type*> params;
    for (size_t k = 1; k < types.size(); ++k) params.push_back(api_type(c, types[k]));
    llvm::Type* ret = api_type(c, types[0]);
    auto* type = llvm::FunctionType::get(ret, params, false);
    auto* fn = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, name + "_" + f.suffix, m);
    fn->setUWTableKind(llvm::UWTableKind::Async);
    std::vector<llvm::Type*> host_params = {llvm::PointerType::get(c, 0)};
    host_params.insert(host_params.end(), params.begin(), params.end());
    llvm::FunctionCallee host = m.getOrInsertFunction(std::string("kiln_host_") + f.suffix,
                                                      llvm::FunctionType::get(ret, host_params, false));
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", fn));
    std::vector<llvm::Value*> args = {desc};
    for (llvm::Argument& a : fn->args()) args.push_back(&a);
    llvm::Value* r = b.CreateCall(host, args);
    if (ret->isVoidTy())
      b.CreateRetVoid();
    else
      b.CreateRet(r);
  }
}

std::string node_problem(const ir::Node& n) {
  auto it = lowerings().find(n.op());
  if (it == lowerings().end()) {
    const cpp::Emitter* e = cpp::emitters().find(n.op());
    if (e && e->alias_input >= 0) return "";  // a view or a copy: no kernel
    return fmt::format("node '{}' ({}): no LLVM lowering yet (the C++ backend compiles it)", n.name(), n.op());
  }
  if (std::string r = it->second.unsupported(n); !r.empty()) return fmt::format("node '{}' ({}): {}", n.name(), n.op(), r);
  return "";
}

}  // namespace

bool available() { return true; }

std::vector<std::string> unsupported(const ir::Graph& graph) {
  // Symbolic shapes first, alone: the nodes' checks read static extents.
  if (!graph.dim_ranges().empty())
    return {"symbolic dims (--dim NAME=MIN..MAX): the LLVM backend compiles static shapes"};
  for (const auto& n : graph.nodes())
    for (const ir::Value* v : n->outputs())
      if (v && !v->shape().is_static())
        return {fmt::format("value '{}' has a symbolic shape: the LLVM backend compiles static shapes", v->name())};
  std::vector<std::string> problems;
  for (const auto& n : graph.nodes())
    if (std::string p = node_problem(*n); !p.empty()) problems.push_back(p);
  return problems;
}

LlvmModel write_object(const ir::Graph& graph, const LlvmOptions& options, const std::filesystem::path& object) {
  if (std::vector<std::string> p = unsupported(graph); !p.empty())
    fail("the LLVM backend cannot compile this model:\n  {}", fmt::join(p, "\n  "));
  std::unique_ptr<llvm::TargetMachine> tm = target_machine(options);
  llvm::LLVMContext c;
  llvm::Module m(options.name, c);
  m.setTargetTriple(tm->getTargetTriple().str());
  m.setDataLayout(tm->createDataLayout());
  m.setPICLevel(llvm::PICLevel::BigPIC);
  llvm::PointerType* p = llvm::PointerType::get(c, 0);

  cpp::WeightBlob weights(passes::Precision::FP32);
  const cpp::Plan plan = cpp::plan_graph(graph, weights, options.emit, {});

  // int32_t run(A, W, in, out, pool, prof, error): kiln_model_run_fn
  auto* run_type = llvm::FunctionType::get(llvm::Type::getInt32Ty(c), {p, p, p, p, p, p, p}, false);
  auto* run = llvm::Function::Create(run_type, llvm::GlobalValue::InternalLinkage, "kiln_run_graph", m);
  run->setUWTableKind(llvm::UWTableKind::Async);
  llvm::BasicBlock::Create(c, "entry", run);
  Lowerer l(m, run, plan, weights, options.emit);
  l.b.SetInsertPoint(&run->getEntryBlock());
  llvm::Value* run_start = l.call("kiln_abi_now_ns", l.b.getInt64Ty(), {});
  std::vector<std::string> node_names, node_ops;
  for (const auto& n : graph.nodes()) {
    const cpp::Lowering how = plan.lowering.at(n.get());
    if (how == cpp::Lowering::Alias) continue;
    llvm::Value* t0 = l.call("kiln_abi_node_begin", l.b.getInt64Ty(), {l.prof()});
    if (how == cpp::Lowering::Copy)
      l.b.CreateMemCpy(l.out(*n, 0), llvm::MaybeAlign(), l.in(*n, 0), llvm::MaybeAlign(),
                       cpp::max_value_bytes(n->output(0)));
    else
      lowerings().find(n->op())->second.lower(l, *n);
    l.call("kiln_abi_node_end", {l.prof(), l.i64(static_cast<int64_t>(node_names.size())), run_start, t0});
    node_names.push_back(n->name());
    node_ops.push_back(n->op());
  }
  for (const auto& [j, v] : plan.final_copies)
    l.b.CreateMemCpy(l.at({Location::Output, j, 0}), llvm::MaybeAlign(), l.value(v), llvm::MaybeAlign(),
                     cpp::max_value_bytes(v));
  l.b.CreateRet(l.b.getInt32(0));

  // The weights, final now that the nodes have packed theirs: one read-only, 64-byte aligned
  // section in the object, or NAME.weights beside it.
  weights.pad_if_empty();
  LlvmModel result;
  result.plan = plan.memory;
  result.nodes = node_names.size();
  Table t(m);
  llvm::Constant* weights_ptr = llvm::ConstantPointerNull::get(p);
  if (!options.external_weights) {
    const std::string& bytes = weights.bytes();
    llvm::Constant* data = llvm::ConstantDataArray::getRaw(bytes, bytes.size(), llvm::Type::getInt8Ty(c));
    auto* g = new llvm::GlobalVariable(m, data->getType(), true, llvm::GlobalValue::InternalLinkage, data,
                                       "kiln_" + options.name + "_weights");
    g->setAlignment(llvm::Align(64));
    g->setSection(".rodata.kiln_" + options.name + "_weights");
    weights_ptr = g;
  }

  std::vector<std::string> io_names;
  std::vector<int64_t> io_dtypes, io_at = {0}, io_dims;
  for (const auto* list : {&graph.inputs(), &graph.outputs()})
    for (const ir::Value* v : *list) {
      io_names.push_back(v->name());
      io_dtypes.push_back(static_cast<int64_t>(v->dtype()));
      for (int64_t d : v->shape().values()) io_dims.push_back(d);
      io_at.push_back(static_cast<int64_t>(io_dims.size()));
    }
  std::vector<llvm::Constant*> fields = {
      t.u64(KILN_MODEL_DESC_ABI), t.str(options.name), t.u64(plan.memory.arena_size), t.u64(weights.bytes().size()),
      weights_ptr, t.u64(node_names.size()), t.strs(node_names), t.strs(node_ops), t.u64(graph.inputs().size()),
      t.u64(graph.outputs().size()), t.strs(io_names), t.i64s(io_dtypes), t.i64s(io_at), t.i64s(io_dims),
      t.i64s(std::vector<int64_t>(io_dims.size() + 1, 1)), run, t.str(options.build_info)};
  std::vector<llvm::Type*> field_types;
  for (llvm::Constant* f : fields) field_types.push_back(f->getType()->isPointerTy() ? static_cast<llvm::Type*>(p) : f->getType());
  auto* desc_type = llvm::StructType::get(c, field_types);
  auto* desc = new llvm::GlobalVariable(m, desc_type, true, llvm::GlobalValue::InternalLinkage,
                                        llvm::ConstantStruct::get(desc_type, fields), "kiln_" + options.name + "_desc");
  // The executable's main (write_main_object) finds the table by this name.
  auto* desc_ref = new llvm::GlobalVariable(m, p, true, llvm::GlobalValue::ExternalLinkage, desc,
                                            "kiln_" + options.name + "_model");
  desc_ref->setVisibility(llvm::GlobalValue::HiddenVisibility);
  add_api(m, desc, options.name);

  optimize(m, *tm);
  emit(m, *tm, object);
  result.weights = weights.take_bytes();
  return result;
}

void write_main_object(const LlvmOptions& options, const std::filesystem::path& object) {
  std::unique_ptr<llvm::TargetMachine> tm = target_machine(options);
  llvm::LLVMContext c;
  llvm::Module m("main", c);
  m.setTargetTriple(tm->getTargetTriple().str());
  m.setDataLayout(tm->createDataLayout());
  m.setPICLevel(llvm::PICLevel::BigPIC);
  llvm::PointerType* p = llvm::PointerType::get(c, 0);
  llvm::Type* i32 = llvm::Type::getInt32Ty(c);
  auto* model = new llvm::GlobalVariable(m, p, true, llvm::GlobalValue::ExternalLinkage, nullptr,
                                         "kiln_" + options.name + "_model");
  model->setVisibility(llvm::GlobalValue::HiddenVisibility);
  auto* main = llvm::Function::Create(llvm::FunctionType::get(i32, {i32, p}, false), llvm::GlobalValue::ExternalLinkage,
                                      "main", m);
  main->setUWTableKind(llvm::UWTableKind::Async);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", main));
  llvm::FunctionCallee exe_main = m.getOrInsertFunction("kiln_host_exe_main", llvm::FunctionType::get(i32, {p, i32, p}, false));
  b.CreateRet(b.CreateCall(exe_main, {b.CreateLoad(p, model), main->getArg(0), main->getArg(1)}));
  emit(m, *tm, object);
}

}  // namespace kiln::codegen::llvm_ir
