// The evaluator's statements: assignment, control flow resolved at compile time, and the
// if-conversion of branches on tensor values.
#include <fmt/format.h>

#include <set>

#include "frontend/torchscript/aten_internal.h"
#include "frontend/torchscript/ts_lowering.h"
#include "ir/error.h"

namespace kiln::frontend::torchscript {


Lowering::Flow Lowering::exec(const Block& block) {
  for (const StmtPtr& s : block) {
    Flow f = exec_stmt(*s);
    if (f != Flow::Normal) return f;
  }
  return Flow::Normal;
}

void Lowering::assign(const Expr& target, const TValue& v) {
  LocGuard guard(*this, target.loc);
  switch (target.kind) {
    case ExprKind::Name: frame()->locals[target.name] = v; return;
    case ExprKind::Tuple:
    case ExprKind::List: {
      if (!v.is_sequence()) fail_op(fmt::format("cannot unpack {}", describe(v)));
      if (v.items->size() != target.args.size())
        fail_op(fmt::format("cannot unpack {} values into {}", v.items->size(), target.args.size()));
      std::vector<TValue> items = *v.items;
      for (size_t k = 0; k < items.size(); ++k) assign(*target.args[k], items[k]);
      return;
    }
    case ExprKind::Attribute: {
      TValue obj = eval(*target.args.at(0));
      if (obj.kind != TKind::Object) fail_op(fmt::format("cannot set attribute '{}' of {}", target.name, describe(obj)));
      obj.object->attrs[target.name] = v;
      return;
    }
    case ExprKind::Subscript: {
      TValue c = eval(*target.args.at(0));
      TValue key = eval(*target.args.at(1));
      if (c.is_tensor()) fail_op("assigning into a tensor (x[i] = v) is not supported");
      call_aten("_set_item", {c, key, v}, {});
      return;
    }
    default: fail_op("invalid assignment target");
  }
}

Lowering::Flow Lowering::exec_stmt(const Stmt& s) {
  step();
  LocGuard guard(*this, s.loc);
  switch (s.kind) {
    case StmtKind::Expr: eval(*s.value); return Flow::Normal;
    case StmtKind::Assign: {
      TValue v = eval(*s.value);
      for (const ExprPtr& t : s.targets) assign(*t, v);
      return Flow::Normal;
    }
    case StmtKind::AnnAssign:
      if (s.value) assign(*s.targets.at(0), eval(*s.value));
      return Flow::Normal;
    case StmtKind::AugAssign: {
      const Expr& t = *s.targets.at(0);
      assign(t, eval_binary(s.aug_op, eval(t), eval(*s.value), t));
      return Flow::Normal;
    }
    case StmtKind::Return:
      frame()->locals["@return"] = s.value ? eval(*s.value) : TValue::none();
      return Flow::Return;
    case StmtKind::Pass: return Flow::Normal;
    case StmtKind::Break: return Flow::Break;
    case StmtKind::Continue: return Flow::Continue;
    case StmtKind::If: return exec_if(s);
    case StmtKind::While: return exec_while(s);
    case StmtKind::For: return exec_for(s);
    case StmtKind::Raise: {
      std::string msg = s.value ? describe(eval(*s.value)) : "";
      fail_op(fmt::format("the model raises an exception at compile time: {}", msg));
    }
    case StmtKind::Assert: {
      TValue t = eval(*s.value);
      auto ok = truth(t);
      if (ok && !*ok)
        fail_op(fmt::format("an assertion of the model fails at compile time{}",
                            s.message ? ": " + describe(eval(*s.message)) : ""));
      return Flow::Normal;  // an assertion on tensor data is not checked at run time
    }
    case StmtKind::With: {
      if (s.value) eval(*s.value);
      return exec(s.body);
    }
    case StmtKind::Import: return Flow::Normal;
    case StmtKind::Def:
    case StmtKind::Class: fail_op("nested definitions are not supported");
  }
  return Flow::Normal;
}

namespace {
// A branch that ends by raising is one the model never takes at run time.
bool raises(const Block& b) {
  if (b.empty()) return false;
  const Stmt& last = *b.back();
  if (last.kind == StmtKind::Raise) return true;
  if (last.kind == StmtKind::Expr && last.value->kind == ExprKind::Call) {
    const Expr& f = *last.value->args.at(0);
    return f.kind == ExprKind::Attribute && f.name == "RaiseException";
  }
  return false;
}
}  // namespace

Lowering::Flow Lowering::exec_if(const Stmt& s) {
  TValue c = eval(*s.value);
  if (auto t = truth(c)) return exec(*t ? s.body : s.orelse);
  // A condition on tensor data: a branch that raises is never taken; otherwise run both and
  // select what they computed.
  if (raises(s.body)) return exec(s.orelse);
  if (raises(s.orelse)) return exec(s.body);
  ir::Value* cond = call_aten("Bool", {c}, {}).tensor;
  std::map<std::string, TValue> before = frame()->locals;
  Flow fa = exec(s.body);
  std::map<std::string, TValue> after_a = frame()->locals;
  frame()->locals = before;
  Flow fb = exec(s.orelse);
  std::map<std::string, TValue> after_b = frame()->locals;
  if (fa != Flow::Normal || fb != Flow::Normal)
    fail_op("return, break or continue inside an `if` on tensor data is not supported");
  std::set<std::string> names;
  for (const auto& [n, v] : after_a) names.insert(n);
  for (const auto& [n, v] : after_b) names.insert(n);
  for (const std::string& n : names) {
    auto a = after_a.find(n), b = after_b.find(n);
    if (a == after_a.end() || b == after_b.end()) {  // defined in one branch only: not usable after the if
      frame()->locals.erase(n);
      continue;
    }
    frame()->locals[n] = merge(cond, a->second, b->second, n);
  }
  return Flow::Normal;
}

TValue Lowering::merge(ir::Value* cond, const TValue& a, const TValue& b, const std::string& name) {
  if (a.is_tensor() && b.is_tensor() && a.tensor == b.tensor) return a;
  if (!a.is_tensor() && !b.is_tensor() && a.kind == b.kind && a.kind != TKind::List && a.kind != TKind::Tuple &&
      aten::values_equal(a, b))
    return a;
  if (a.is_sequence() && b.is_sequence() && a.kind == b.kind && a.items->size() == b.items->size()) {
    std::vector<TValue> items;
    for (size_t k = 0; k < a.items->size(); ++k) items.push_back(merge(cond, (*a.items)[k], (*b.items)[k], name));
    return a.kind == TKind::List ? TValue::list(std::move(items)) : TValue::tuple(std::move(items));
  }
  if ((a.is_tensor() || a.is_number()) && (b.is_tensor() || b.is_number()))
    return call_aten("where", {TValue::of(cond), a, b}, {});
  if (a.kind == TKind::None && b.kind == TKind::None) return a;
  fail_op(fmt::format("'{}' is {} in one branch of an `if` on tensor data and {} in the other", name, describe(a),
                      describe(b)));
}

Lowering::Flow Lowering::exec_for(const Stmt& s) {
  TValue it = eval(*s.value);
  std::vector<TValue> items;
  if (it.is_sequence()) {
    items = *it.items;
  } else if (it.kind == TKind::Dict) {
    for (const auto& [k, v] : *it.dict) items.push_back(k);
  } else if (it.is_tensor()) {
    items = *call_aten("unbind", {it, TValue::integer(0)}, {}).items;
  } else {
    fail_op(fmt::format("cannot iterate over {}", describe(it)));
  }
  for (const TValue& v : items) {
    if (++iterations_ > limits_.max_loop_iterations)
      fail_op(fmt::format("loops ran more than {} iterations at compile time", limits_.max_loop_iterations));
    assign(*s.targets.at(0), v);
    Flow f = exec(s.body);
    if (f == Flow::Break) break;
    if (f == Flow::Return) return f;
  }
  if (!s.orelse.empty()) fail_op("for ... else is not supported");
  return Flow::Normal;
}

Lowering::Flow Lowering::exec_while(const Stmt& s) {
  while (true) {
    TValue c = eval(*s.value);
    auto t = truth(c);
    if (!t) fail_op("a while loop whose condition depends on tensor data is not supported");
    if (!*t) break;
    if (++iterations_ > limits_.max_loop_iterations)
      fail_op(fmt::format("loops ran more than {} iterations at compile time", limits_.max_loop_iterations));
    Flow f = exec(s.body);
    if (f == Flow::Break) break;
    if (f == Flow::Return) return f;
  }
  return Flow::Normal;
}

}  // namespace kiln::frontend::torchscript
