// libFuzzer target: arbitrary bytes through the TorchScript code parser. Any input must either
// parse or throw kiln::Error; a tree that parses must be well formed: every node placed (line and
// column from 1), each kind with the children it promises, and no deeper than the limit allows
// (blocks and expression heights each bounded by max_depth, so 2 * max_depth in all).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "frontend/torchscript/ts_parser.h"
#include "ir/error.h"

namespace ts = kiln::frontend::torchscript;

namespace {

constexpr int kMaxDepth = 200;  // ParseLimits' default

void check(bool ok) {
  if (!ok) std::abort();
}

void check_loc(const ts::SourceLoc& loc) { check(loc.file == "fuzz.py" && loc.line >= 1 && loc.column >= 1); }

void walk(const ts::Expr* e, int depth) {
  check(e != nullptr && depth <= 2 * kMaxDepth);
  check_loc(e->loc);
  size_t n = e->args.size();
  switch (e->kind) {
    case ts::ExprKind::Name:
    case ts::ExprKind::Int:
    case ts::ExprKind::Float:
    case ts::ExprKind::String:
    case ts::ExprKind::None:
    case ts::ExprKind::Bool: check(n == 0); break;
    case ts::ExprKind::Attribute:
    case ts::ExprKind::Unary: check(n == 1); break;
    case ts::ExprKind::Subscript:
    case ts::ExprKind::Binary:
    case ts::ExprKind::Compare:
    case ts::ExprKind::BoolOp: check(n == 2); break;
    case ts::ExprKind::IfExp: check(n == 3); break;
    case ts::ExprKind::Slice:
      check(n == 3);
      for (const auto& a : e->args) {
        if (a) walk(a.get(), depth + 1);
      }
      return;
    case ts::ExprKind::Call: check(n >= 1); break;
    case ts::ExprKind::Dict: check(n % 2 == 0); break;
    case ts::ExprKind::Tuple:
    case ts::ExprKind::List: break;
  }
  check(e->keywords.empty() || e->kind == ts::ExprKind::Call);
  for (const auto& a : e->args) walk(a.get(), depth + 1);
  for (const auto& k : e->keywords) walk(k.value.get(), depth + 1);
}

void walk(const ts::Block& block, int depth);

void walk(const ts::Stmt& s, int depth) {
  check(depth <= 2 * kMaxDepth);
  check_loc(s.loc);
  for (const auto& t : s.targets) walk(t.get(), depth + 1);
  if (s.value) walk(s.value.get(), depth + 1);
  if (s.annotation) walk(s.annotation.get(), depth + 1);
  if (s.message) walk(s.message.get(), depth + 1);
  switch (s.kind) {
    case ts::StmtKind::Expr:
    case ts::StmtKind::If:
    case ts::StmtKind::While: check(s.value != nullptr && s.targets.empty()); break;
    case ts::StmtKind::Assign: check(s.value != nullptr && !s.targets.empty()); break;
    case ts::StmtKind::AnnAssign: check(s.annotation != nullptr && s.targets.size() == 1); break;
    case ts::StmtKind::AugAssign:
    case ts::StmtKind::For: check(s.value != nullptr && s.targets.size() == 1); break;
    case ts::StmtKind::With: check(s.value != nullptr && s.targets.size() <= 1); break;
    case ts::StmtKind::Assert: check(s.value != nullptr); break;
    case ts::StmtKind::Def:
      check(s.def != nullptr);
      for (const auto& p : s.def->params) {
        check_loc(p.loc);
        if (p.annotation) walk(p.annotation.get(), depth + 1);
        if (p.default_value) walk(p.default_value.get(), depth + 1);
      }
      if (s.def->returns) walk(s.def->returns.get(), depth + 1);
      check(!s.def->body.empty());
      walk(s.def->body, depth + 1);
      break;
    case ts::StmtKind::Class:
      check(s.cls != nullptr);
      for (const auto& b : s.cls->bases) walk(b.get(), depth + 1);
      check(!s.cls->body.empty());
      walk(s.cls->body, depth + 1);
      break;
    default: break;
  }
  if (s.kind == ts::StmtKind::If || s.kind == ts::StmtKind::While || s.kind == ts::StmtKind::For ||
      s.kind == ts::StmtKind::With) {
    check(!s.body.empty());
  }
  walk(s.body, depth + 1);
  walk(s.orelse, depth + 1);
}

void walk(const ts::Block& block, int depth) {
  for (const auto& s : block) walk(*s, depth);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  ts::Module module;
  try {
    module = ts::parse_source(text, "fuzz.py");
  } catch (const kiln::Error& e) {
    // Every message says where: "fuzz.py:LINE:COL: found ..., expected ...".
    check(std::string_view(e.what()).starts_with("fuzz.py:"));
    return 0;
  }
  check(module.file == "fuzz.py");
  walk(module.body, 0);
  return 0;
}
