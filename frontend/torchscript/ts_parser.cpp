// A recursive-descent parser for the subset of Python that python_print.cpp writes: the
// statements and the entry point (expressions are in ts_parse_expressions.cpp).
#include "frontend/torchscript/ts_parser.h"

#include "frontend/torchscript/ts_parser_internal.h"

namespace kiln::frontend::torchscript {
namespace detail {
namespace {

bool augmented_op(const Token& t, Op& op) {
  if (t.kind != TokenKind::Op || t.text.size() < 2 || t.text.back() != '=') return false;
  Token bare = t;
  bare.text.pop_back();
  if (bare.text == "**") {
    op = Op::Pow;
    return true;
  }
  return binary_precedence(bare, op) >= 0;  // "<=" and "==" are no binary operator plus '='
}

}  // namespace

StmtPtr Parser::stmt(StmtKind kind, const SourceLoc& where) {
  auto s = std::make_unique<Stmt>();
  s->kind = kind;
  s->loc = where;
  return s;
}

void Parser::statement(Block& out) {
  if (tok_.kind == TokenKind::Keyword) {
    const std::string& k = tok_.text;
    if (k == "if") return out.push_back(if_statement());
    if (k == "while" || k == "for") return out.push_back(loop());
    if (k == "with") return out.push_back(with_statement());
    if (k == "def") return out.push_back(def_statement());
    if (k == "class") return out.push_back(class_statement());
  }
  simple_statements(out);
}

// small_stmt (';' small_stmt)* [';'] NEWLINE
void Parser::simple_statements(Block& out) {
  out.push_back(small_statement());
  while (is_op(tok_, ";")) {
    advance();
    if (tok_.kind == TokenKind::Newline) break;
    out.push_back(small_statement());
  }
  expect_newline();
}

StmtPtr Parser::small_statement() {
  SourceLoc where = loc(tok_);
  if (tok_.kind == TokenKind::Keyword) {
    const std::string k = tok_.text;
    if (k == "pass" || k == "break" || k == "continue") {
      advance();
      return stmt(k == "pass" ? StmtKind::Pass : k == "break" ? StmtKind::Break : StmtKind::Continue, where);
    }
    if (k == "return" || k == "raise") {
      advance();
      auto s = stmt(k == "return" ? StmtKind::Return : StmtKind::Raise, where);
      if (starts_expression()) s->value = k == "return" ? testlist() : test();
      return s;
    }
    if (k == "assert") {
      advance();
      auto s = stmt(StmtKind::Assert, where);
      s->value = test();
      if (is_op(tok_, ",")) {
        advance();
        s->message = test();
      }
      return s;
    }
    if (k == "import" || k == "from") return import_statement();
    if (k != "not" && k != "None" && k != "True" && k != "False") error("a statement");
  }
  if (tok_.kind == TokenKind::Indent) error("a statement at the indentation of the block");
  if (!starts_expression()) error("a statement");
  return expression_statement(where);
}

// An expression, an assignment (chained, unpacking), an annotated or augmented assignment.
StmtPtr Parser::expression_statement(const SourceLoc& where) {
  ExprPtr first = testlist();
  if (is_op(tok_, ":")) {
    check_target(*first, true);
    advance();
    auto s = stmt(StmtKind::AnnAssign, where);
    s->annotation = test();
    if (is_op(tok_, "=")) {
      advance();
      s->value = testlist();
    }
    s->targets.push_back(std::move(first));
    return s;
  }
  Op op;
  if (augmented_op(tok_, op)) {
    check_target(*first, true);
    advance();
    auto s = stmt(StmtKind::AugAssign, where);
    s->aug_op = op;
    s->targets.push_back(std::move(first));
    s->value = testlist();
    return s;
  }
  if (!is_op(tok_, "=")) {
    auto s = stmt(StmtKind::Expr, where);
    s->value = std::move(first);
    return s;
  }
  auto s = stmt(StmtKind::Assign, where);
  ExprPtr value = std::move(first);
  while (is_op(tok_, "=")) {
    check_target(*value, false);
    s->targets.push_back(std::move(value));
    advance();
    value = testlist();
  }
  s->value = std::move(value);
  return s;
}

// `import a.b [as c], ...` and `from a import b [as c], ...`: kept as an Import with nothing in it.
StmtPtr Parser::import_statement() {
  auto s = stmt(StmtKind::Import, loc(tok_));
  auto dotted = [&] {
    expect_name("a module name");
    while (is_op(tok_, ".")) {
      advance();
      expect_name("a module name after '.'");
    }
  };
  auto aliases = [&](auto&& item) {
    while (true) {
      item();
      if (is_keyword(tok_, "as")) {
        advance();
        expect_name("a name after 'as'");
      }
      if (!is_op(tok_, ",")) return;
      advance();
    }
  };
  if (is_keyword(tok_, "import")) {
    advance();
    aliases(dotted);
    return s;
  }
  advance();  // from
  bool relative = false;
  while (is_op(tok_, ".") || is_op(tok_, "...")) {
    relative = true;
    advance();
  }
  if (!relative || tok_.kind == TokenKind::Name) dotted();
  expect_keyword("import");
  if (is_op(tok_, "*")) {
    advance();
  } else if (is_op(tok_, "(")) {
    advance();
    aliases([&] { expect_name("a name to import"); });
    expect_op(")");
  } else {
    aliases([&] { expect_name("a name to import"); });
  }
  return s;
}

// ':' then the statements of a block: an indented block, or simple statements on the line.
void Parser::suite(Block& out) {
  expect_op(":");
  Nest nest(*this, tok_);
  if (tok_.kind != TokenKind::Newline) return simple_statements(out);
  advance();
  if (tok_.kind != TokenKind::Indent) error("an indented block");
  advance();
  while (tok_.kind != TokenKind::Dedent) statement(out);
  advance();
}

// if / elif / else; each elif is an If in the orelse of the one before.
StmtPtr Parser::if_statement() {
  auto first = stmt(StmtKind::If, loc(tok_));
  advance();
  first->value = test();
  suite(first->body);
  Stmt* last = first.get();
  int chained = 0;
  while (is_keyword(tok_, "elif")) {
    if (depth_ + ++chained > limits_.max_depth) too_deep(tok_.line, tok_.column);
    auto next = stmt(StmtKind::If, loc(tok_));
    advance();
    next->value = test();
    suite(next->body);
    Stmt* raw = next.get();
    last->orelse.push_back(std::move(next));
    last = raw;
  }
  if (is_keyword(tok_, "else")) {
    advance();
    suite(last->orelse);
  }
  return first;
}

// while test: body [else: orelse] / for targets in iterable: body [else: orelse]
StmtPtr Parser::loop() {
  bool is_for = is_keyword(tok_, "for");
  auto s = stmt(is_for ? StmtKind::For : StmtKind::While, loc(tok_));
  advance();
  if (is_for) {
    ExprPtr target = target_list();
    check_target(*target, false);
    s->targets.push_back(std::move(target));
    expect_keyword("in");
    s->value = testlist();
  } else {
    s->value = test();
  }
  suite(s->body);
  if (is_keyword(tok_, "else")) {
    advance();
    suite(s->orelse);
  }
  return s;
}

// with item [as target] (, item [as target])*: body; several items nest, as in Python.
StmtPtr Parser::with_statement() {
  auto first = stmt(StmtKind::With, loc(tok_));
  advance();
  Stmt* last = first.get();
  int chained = 0;
  while (true) {
    last->value = test();
    if (is_keyword(tok_, "as")) {
      advance();
      ExprPtr target = binary(0);
      check_target(*target, false);
      last->targets.push_back(std::move(target));
    }
    if (!is_op(tok_, ",")) break;
    if (depth_ + ++chained > limits_.max_depth) too_deep(tok_.line, tok_.column);
    advance();
    auto inner = stmt(StmtKind::With, loc(tok_));
    Stmt* raw = inner.get();
    last->body.push_back(std::move(inner));
    last = raw;
  }
  suite(last->body);
  return first;
}

// def NAME '(' [param (',' param)* [',']] ')' ['->' test] ':' suite
StmtPtr Parser::def_statement() {
  auto s = stmt(StmtKind::Def, loc(tok_));
  s->def = std::make_unique<FunctionDef>();
  FunctionDef& def = *s->def;
  def.loc = s->loc;
  advance();
  def.name = expect_name("a function name");
  expect_op("(");
  while (!is_op(tok_, ")")) {
    if (is_op(tok_, "*") || is_op(tok_, "**") || is_op(tok_, "/")) {
      error("a parameter name (star and positional-only parameters are not part of serialized code)");
    }
    Param p;
    p.loc = loc(tok_);
    p.name = expect_name("a parameter name");
    if (is_op(tok_, ":")) {
      advance();
      p.annotation = test();
    }
    if (is_op(tok_, "=")) {
      advance();
      p.default_value = test();
    }
    def.params.push_back(std::move(p));
    if (!is_op(tok_, ",")) break;
    advance();
  }
  expect_op(")");
  if (is_op(tok_, "->")) {
    advance();
    def.returns = test();
  }
  suite(def.body);
  return s;
}

// class NAME ['(' [base (',' base)* [',']] ')'] ':' suite
StmtPtr Parser::class_statement() {
  auto s = stmt(StmtKind::Class, loc(tok_));
  s->cls = std::make_unique<ClassDef>();
  ClassDef& cls = *s->cls;
  cls.loc = s->loc;
  advance();
  cls.name = expect_name("a class name");
  if (is_op(tok_, "(")) {
    advance();
    while (!is_op(tok_, ")")) {
      ExprPtr base = test();
      if (is_op(tok_, "=")) error("',' or ')' (class keywords are not part of serialized code)");
      cls.bases.push_back(std::move(base));
      if (!is_op(tok_, ",")) break;
      advance();
    }
    expect_op(")");
  }
  suite(cls.body);
  return s;
}

}  // namespace detail

Module parse_source(std::string_view text, const std::string& file, const ParseLimits& limits) {
  if (text.size() > limits.max_source_bytes) {
    syntax_error(file, 1, 1, fmt::format("a file of {} bytes", text.size()),
                 fmt::format("at most {} bytes", limits.max_source_bytes));
  }
  return detail::Parser(text, file, limits).parse_module();
}

}  // namespace kiln::frontend::torchscript
