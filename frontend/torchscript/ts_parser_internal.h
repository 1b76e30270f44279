// The parser behind parse_source (ts_parser.h), shared by its two halves: expressions in
// ts_parse_expressions.cpp, statements in ts_parser.cpp. Not part of the frontend's interface.
//
// Depth: every recursion that input can repeat (blocks, brackets, unary operators, `**`,
// `if`-`else`) counts against ParseLimits::max_depth, and so does the height of every
// expression built, left-deep chains like `a + b + c` or `x.y.z` included, so that neither this
// parser nor a recursive walk over its tree can overflow the stack.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

#include "frontend/torchscript/ts_ast.h"
#include "frontend/torchscript/ts_lexer.h"
#include "frontend/torchscript/ts_parser.h"
#include "ir/error.h"

namespace kiln::frontend::torchscript::detail {

inline bool is_op(const Token& t, std::string_view text) { return t.kind == TokenKind::Op && t.text == text; }
inline bool is_keyword(const Token& t, std::string_view text) {
  return t.kind == TokenKind::Keyword && t.text == text;
}

// Binary operators by precedence, lowest first; -1 for a token that is none.
int binary_precedence(const Token& t, Op& op);

// How an expression is named in "found ..." messages.
std::string describe_expr(const Expr& e);

class Parser {
 public:
  Parser(std::string_view text, const std::string& file, const ParseLimits& limits)
      : lexer_(text, file), file_(file), limits_(limits) {
    advance();
  }

  Module parse_module() {
    Module module;
    module.file = file_;
    while (tok_.kind != TokenKind::End) statement(module.body);
    return module;
  }

 private:
  // One level of nesting for as long as it lives.
  class Nest {
   public:
    Nest(Parser& p, const Token& at) : p_(p) {
      if (++p_.depth_ > p_.limits_.max_depth) p_.too_deep(at.line, at.column);
    }
    ~Nest() { --p_.depth_; }
    Nest(const Nest&) = delete;
    Nest& operator=(const Nest&) = delete;

   private:
    Parser& p_;
  };

  [[noreturn]] void too_deep(int line, int column) const {
    syntax_error(file_, line, column, fmt::format("nesting deeper than {}", limits_.max_depth),
                 fmt::format("at most {} levels of blocks and expressions", limits_.max_depth));
  }
  [[noreturn]] void error(std::string_view expected) const {
    syntax_error(file_, tok_.line, tok_.column, describe(tok_), expected);
  }
  [[noreturn]] void error_at(const Expr& e, std::string_view expected) const {
    syntax_error(file_, e.loc.line, e.loc.column, describe_expr(e), expected);
  }

  SourceLoc loc(const Token& t) const { return SourceLoc{file_, t.line, t.column}; }
  void advance() { tok_ = lexer_.next(); }
  void expect_op(std::string_view text) {
    if (!is_op(tok_, text)) error(fmt::format("'{}'", text));
    advance();
  }
  void expect_keyword(std::string_view text) {
    if (!is_keyword(tok_, text)) error(fmt::format("'{}'", text));
    advance();
  }
  std::string expect_name(std::string_view what) {
    if (tok_.kind != TokenKind::Name) error(what);
    std::string name = std::move(tok_.text);
    advance();
    return name;
  }
  void expect_newline() {
    if (tok_.kind != TokenKind::Newline) error("the end of the line");
    advance();
  }

  // ---- Expression nodes ----

  int height(const Expr* e) const {
    if (e == nullptr) return 0;
    auto it = heights_.find(e);
    return it == heights_.end() ? 1 : it->second;
  }

  bool starts_expression() const;
  ExprPtr seal(ExprPtr e);  // records the height of a node, refusing one too deep

  static ExprPtr node(ExprKind kind, SourceLoc where);
  ExprPtr node(ExprKind kind, SourceLoc where, ExprPtr a, ExprPtr b = nullptr);
  ExprPtr operation(ExprKind kind, Op op, ExprPtr a, ExprPtr b = nullptr);

  // ---- Expressions ----

  ExprPtr test();
  ExprPtr or_test();
  ExprPtr and_test();
  ExprPtr not_test();
  bool comparison_op(Op& op);
  ExprPtr comparison();
  ExprPtr binary(int min_precedence);
  ExprPtr unary();
  ExprPtr power();
  ExprPtr postfix();
  ExprPtr call(ExprPtr func);
  ExprPtr subscript(ExprPtr value);
  ExprPtr subscript_item();
  ExprPtr atom();
  ExprPtr parenthesized();
  ExprPtr list();
  ExprPtr dict();
  ExprPtr testlist();
  ExprPtr target_list();
  void check_target(const Expr& e, bool single) const;

  // ---- Statements ----

  StmtPtr stmt(StmtKind kind, const SourceLoc& where);
  void statement(Block& out);
  void simple_statements(Block& out);
  StmtPtr small_statement();
  StmtPtr expression_statement(const SourceLoc& where);
  StmtPtr import_statement();
  void suite(Block& out);
  StmtPtr if_statement();
  StmtPtr loop();
  StmtPtr with_statement();
  StmtPtr def_statement();
  StmtPtr class_statement();

  Lexer lexer_;
  const std::string& file_;
  const ParseLimits& limits_;
  Token tok_;
  int depth_ = 0;
  std::unordered_map<const Expr*, int> heights_;  // of nodes above the leaves
};

}  // namespace kiln::frontend::torchscript::detail
