// A recursive-descent parser with Python's precedence for the subset python_print.cpp writes.
// Expressions nest through test -> or -> and -> not -> comparison -> binary (precedence
// climbing over | ^ & << >> + - * / // % @) -> unary -> power -> postfix -> atom.
//
// Depth: every recursion that input can repeat (blocks, brackets, unary operators, `**`,
// `if`-`else`) counts against ParseLimits::max_depth, and so does the height of every
// expression built, left-deep chains like `a + b + c` or `x.y.z` included, so that neither this
// parser nor a recursive walk over its tree can overflow the stack.
#include <unordered_map>

#include "frontend/torchscript/ts_lexer.h"
#include "frontend/torchscript/ts_parser.h"
#include "ir/error.h"

namespace kiln::frontend::torchscript {
namespace {

bool is_op(const Token& t, std::string_view text) { return t.kind == TokenKind::Op && t.text == text; }
bool is_keyword(const Token& t, std::string_view text) {
  return t.kind == TokenKind::Keyword && t.text == text;
}

// Binary operators by precedence, lowest first; -1 for a token that is none.
int binary_precedence(const Token& t, Op& op) {
  if (t.kind != TokenKind::Op) return -1;
  static const struct {
    std::string_view text;
    Op op;
    int precedence;
  } kBinary[] = {
      {"|", Op::BitOr, 0},   {"^", Op::BitXor, 1},   {"&", Op::BitAnd, 2}, {"<<", Op::LShift, 3},
      {">>", Op::RShift, 3}, {"+", Op::Add, 4},      {"-", Op::Sub, 4},    {"*", Op::Mul, 5},
      {"/", Op::Div, 5},     {"//", Op::FloorDiv, 5}, {"%", Op::Mod, 5},   {"@", Op::MatMul, 5},
  };
  for (const auto& b : kBinary) {
    if (t.text == b.text) {
      op = b.op;
      return b.precedence;
    }
  }
  return -1;
}

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

// How an expression is named in "found ..." messages.
std::string describe_expr(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Name: return fmt::format("name '{}'", e.name);
    case ExprKind::Int:
    case ExprKind::Float:
    case ExprKind::String:
    case ExprKind::None:
    case ExprKind::Bool: return "a literal";
    case ExprKind::Attribute: return "an attribute";
    case ExprKind::Call: return "a call";
    case ExprKind::Subscript: return "a subscript";
    case ExprKind::Slice: return "a slice";
    case ExprKind::Tuple: return "a tuple";
    case ExprKind::List: return "a list";
    case ExprKind::Dict: return "a dict";
    case ExprKind::Unary:
    case ExprKind::Binary: return "an operator expression";
    case ExprKind::Compare: return "a comparison";
    case ExprKind::BoolOp: return "a boolean expression";
    case ExprKind::IfExp: return "a conditional expression";
  }
  return "an expression";
}

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

  // Whether the current token can begin an expression.
  bool starts_expression() const {
    switch (tok_.kind) {
      case TokenKind::Name:
      case TokenKind::Int:
      case TokenKind::Float:
      case TokenKind::String: return true;
      case TokenKind::Keyword:
        return tok_.text == "not" || tok_.text == "None" || tok_.text == "True" || tok_.text == "False";
      case TokenKind::Op:
        return tok_.text == "(" || tok_.text == "[" || tok_.text == "{" || tok_.text == "-" || tok_.text == "+" ||
               tok_.text == "~";
      default: return false;
    }
  }

  // ---- Expression nodes ----

  int height(const Expr* e) const {
    if (e == nullptr) return 0;
    auto it = heights_.find(e);
    return it == heights_.end() ? 1 : it->second;
  }

  // Records the height of a node built from its children, refusing one that nests too deep.
  ExprPtr seal(ExprPtr e) {
    int h = 0;
    for (const ExprPtr& a : e->args) h = std::max(h, height(a.get()));
    for (const Keyword& k : e->keywords) h = std::max(h, height(k.value.get()));
    ++h;
    if (depth_ + h > limits_.max_depth) too_deep(e->loc.line, e->loc.column);
    if (h > 1) heights_[e.get()] = h;
    return e;
  }

  static ExprPtr node(ExprKind kind, SourceLoc where) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->loc = std::move(where);
    return e;
  }
  ExprPtr node(ExprKind kind, SourceLoc where, ExprPtr a, ExprPtr b = nullptr) {
    auto e = node(kind, std::move(where));
    e->args.push_back(std::move(a));
    if (b) e->args.push_back(std::move(b));
    return seal(std::move(e));
  }
  ExprPtr operation(ExprKind kind, Op op, ExprPtr a, ExprPtr b = nullptr) {
    SourceLoc where = a->loc;
    auto e = node(kind, std::move(where));
    e->op = op;
    e->args.push_back(std::move(a));
    if (b) e->args.push_back(std::move(b));
    return seal(std::move(e));
  }

  // ---- Expressions ----

  // test: or_test ['if' or_test 'else' test]
  ExprPtr test() {
    if (is_keyword(tok_, "lambda")) error("an expression (lambdas are not part of serialized code)");
    ExprPtr body = or_test();
    if (!is_keyword(tok_, "if")) return body;
    Nest nest(*this, tok_);
    advance();
    ExprPtr condition = or_test();
    expect_keyword("else");
    ExprPtr orelse = test();
    SourceLoc where = body->loc;
    auto e = node(ExprKind::IfExp, std::move(where));
    e->args.push_back(std::move(body));
    e->args.push_back(std::move(condition));
    e->args.push_back(std::move(orelse));
    return seal(std::move(e));
  }

  ExprPtr or_test() {
    ExprPtr left = and_test();
    while (is_keyword(tok_, "or")) {
      advance();
      left = operation(ExprKind::BoolOp, Op::Or, std::move(left), and_test());
    }
    return left;
  }

  ExprPtr and_test() {
    ExprPtr left = not_test();
    while (is_keyword(tok_, "and")) {
      advance();
      left = operation(ExprKind::BoolOp, Op::And, std::move(left), not_test());
    }
    return left;
  }

  ExprPtr not_test() {
    if (!is_keyword(tok_, "not")) return comparison();
    Nest nest(*this, tok_);
    SourceLoc where = loc(tok_);
    advance();
    auto e = node(ExprKind::Unary, std::move(where), not_test());
    e->op = Op::Not;
    return e;
  }

  // One comparison operator at the current token, consumed; false if there is none.
  bool comparison_op(Op& op) {
    if (tok_.kind == TokenKind::Op) {
      static const std::pair<std::string_view, Op> kOps[] = {{"<", Op::Lt},  {">", Op::Gt},  {"==", Op::Eq},
                                                             {">=", Op::Ge}, {"<=", Op::Le}, {"!=", Op::Ne}};
      for (const auto& [text, o] : kOps) {
        if (tok_.text == text) {
          op = o;
          advance();
          return true;
        }
      }
      return false;
    }
    if (is_keyword(tok_, "in")) {
      op = Op::In;
    } else if (is_keyword(tok_, "not")) {
      advance();
      if (!is_keyword(tok_, "in")) error("'in' after 'not'");
      op = Op::NotIn;
    } else if (is_keyword(tok_, "is")) {
      advance();
      op = Op::Is;
      if (!is_keyword(tok_, "not")) return true;
      op = Op::IsNot;
    } else {
      return false;
    }
    advance();
    return true;
  }

  ExprPtr comparison() {
    ExprPtr left = binary(0);
    Op op;
    if (!comparison_op(op)) return left;
    ExprPtr e = operation(ExprKind::Compare, op, std::move(left), binary(0));
    Token at = tok_;
    if (comparison_op(op)) {
      syntax_error(file_, at.line, at.column, fmt::format("a second comparison operator {}", describe(at)),
                   "one comparison (chains like a < b < c are not supported)");
    }
    return e;
  }

  // Precedence climbing over the binary operators; all are left-associative.
  ExprPtr binary(int min_precedence) {
    ExprPtr left = unary();
    while (true) {
      Op op;
      int precedence = binary_precedence(tok_, op);
      if (precedence < min_precedence) return left;
      advance();
      ExprPtr right = binary(precedence + 1);
      left = operation(ExprKind::Binary, op, std::move(left), std::move(right));
    }
  }

  // factor: ('-' | '+' | '~') factor | power
  ExprPtr unary() {
    Op op;
    if (is_op(tok_, "-")) {
      op = Op::Neg;
    } else if (is_op(tok_, "+")) {
      op = Op::Pos;
    } else if (is_op(tok_, "~")) {
      op = Op::Invert;
    } else {
      return power();
    }
    Nest nest(*this, tok_);
    SourceLoc where = loc(tok_);
    advance();
    auto e = node(ExprKind::Unary, std::move(where), unary());
    e->op = op;
    return e;
  }

  // power: postfix ['**' factor]; `-x ** 2` is -(x ** 2) and `2 ** -1` works
  ExprPtr power() {
    ExprPtr base = postfix();
    if (!is_op(tok_, "**")) return base;
    Nest nest(*this, tok_);
    advance();
    return operation(ExprKind::Binary, Op::Pow, std::move(base), unary());
  }

  // postfix: atom ('.' NAME | '(' arguments ')' | '[' subscripts ']')*
  ExprPtr postfix() {
    ExprPtr e = atom();
    while (true) {
      if (is_op(tok_, ".")) {
        advance();
        std::string name = expect_name("an attribute name after '.'");
        SourceLoc where = e->loc;
        e = node(ExprKind::Attribute, std::move(where), std::move(e));
        e->name = std::move(name);
      } else if (is_op(tok_, "(")) {
        e = call(std::move(e));
      } else if (is_op(tok_, "[")) {
        e = subscript(std::move(e));
      } else {
        return e;
      }
    }
  }

  ExprPtr call(ExprPtr func) {
    Nest nest(*this, tok_);
    advance();  // (
    auto e = node(ExprKind::Call, func->loc);
    e->args.push_back(std::move(func));
    while (!is_op(tok_, ")")) {
      if (is_op(tok_, "*") || is_op(tok_, "**")) error("an argument (star arguments are not part of serialized code)");
      ExprPtr arg = test();
      if (is_op(tok_, "=")) {
        if (arg->kind != ExprKind::Name) error("',' or ')'");
        advance();
        e->keywords.push_back(Keyword{std::move(arg->name), test()});
      } else {
        if (!e->keywords.empty()) error_at(*arg, "a keyword argument, as positional ones come first");
        if (is_keyword(tok_, "for")) error("',' or ')' (comprehensions are not part of serialized code)");
        e->args.push_back(std::move(arg));
      }
      if (!is_op(tok_, ",")) break;
      advance();
    }
    expect_op(")");
    return seal(std::move(e));
  }

  ExprPtr subscript(ExprPtr value) {
    Nest nest(*this, tok_);
    SourceLoc bracket = loc(tok_);
    advance();  // [
    if (is_op(tok_, "]")) error("an index");
    ExprPtr index = subscript_item();
    if (is_op(tok_, ",")) {
      auto tuple = node(ExprKind::Tuple, index->loc);
      tuple->args.push_back(std::move(index));
      while (is_op(tok_, ",")) {
        advance();
        if (is_op(tok_, "]")) break;
        tuple->args.push_back(subscript_item());
      }
      index = seal(std::move(tuple));
    }
    expect_op("]");
    SourceLoc where = value->loc;
    return node(ExprKind::Subscript, std::move(where), std::move(value), std::move(index));
  }

  // An index or a slice lower:upper:step, each part optional.
  ExprPtr subscript_item() {
    SourceLoc where = loc(tok_);
    ExprPtr lower;
    if (!is_op(tok_, ":")) {
      lower = test();
      if (!is_op(tok_, ":")) return lower;
    }
    advance();  // :
    auto slice = node(ExprKind::Slice, std::move(where));
    slice->args.push_back(std::move(lower));
    slice->args.push_back(starts_expression() ? test() : nullptr);
    ExprPtr step;
    if (is_op(tok_, ":")) {
      advance();
      if (starts_expression()) step = test();
    }
    slice->args.push_back(std::move(step));
    return seal(std::move(slice));
  }

  ExprPtr atom() {
    switch (tok_.kind) {
      case TokenKind::Name: {
        auto e = node(ExprKind::Name, loc(tok_));
        e->name = std::move(tok_.text);
        advance();
        return e;
      }
      case TokenKind::Int: {
        auto e = node(ExprKind::Int, loc(tok_));
        e->int_value = tok_.int_value;
        advance();
        return e;
      }
      case TokenKind::Float: {
        auto e = node(ExprKind::Float, loc(tok_));
        e->float_value = tok_.float_value;
        advance();
        return e;
      }
      case TokenKind::String: {
        auto e = node(ExprKind::String, loc(tok_));
        e->name = std::move(tok_.text);
        advance();
        while (tok_.kind == TokenKind::String) {  // "a" "b" is "ab", as in Python
          e->name += tok_.text;
          advance();
        }
        return e;
      }
      case TokenKind::Keyword:
        if (tok_.text == "None" || tok_.text == "True" || tok_.text == "False") {
          auto e = node(tok_.text == "None" ? ExprKind::None : ExprKind::Bool, loc(tok_));
          e->int_value = tok_.text == "True" ? 1 : 0;
          advance();
          return e;
        }
        break;
      case TokenKind::Op:
        if (tok_.text == "(") return parenthesized();
        if (tok_.text == "[") return list();
        if (tok_.text == "{") return dict();
        break;
      default:
        break;
    }
    error("an expression");
  }

  // () is an empty tuple, (a) is a, (a,) and (a, b) are tuples.
  ExprPtr parenthesized() {
    Nest nest(*this, tok_);
    auto tuple = node(ExprKind::Tuple, loc(tok_));
    advance();
    if (is_op(tok_, ")")) {
      advance();
      return tuple;
    }
    ExprPtr first = test();
    if (is_keyword(tok_, "for")) error("')' (generator expressions are not part of serialized code)");
    if (!is_op(tok_, ",")) {
      expect_op(")");
      return first;
    }
    tuple->args.push_back(std::move(first));
    while (is_op(tok_, ",")) {
      advance();
      if (is_op(tok_, ")")) break;
      tuple->args.push_back(test());
    }
    expect_op(")");
    return seal(std::move(tuple));
  }

  ExprPtr list() {
    Nest nest(*this, tok_);
    auto e = node(ExprKind::List, loc(tok_));
    advance();
    while (!is_op(tok_, "]")) {
      e->args.push_back(test());
      if (is_keyword(tok_, "for")) error("']' (comprehensions are not part of serialized code)");
      if (!is_op(tok_, ",")) break;
      advance();
    }
    expect_op("]");
    return seal(std::move(e));
  }

  ExprPtr dict() {
    Nest nest(*this, tok_);
    auto e = node(ExprKind::Dict, loc(tok_));
    advance();
    while (!is_op(tok_, "}")) {
      e->args.push_back(test());
      expect_op(":");
      e->args.push_back(test());
      if (!is_op(tok_, ",")) break;
      advance();
    }
    expect_op("}");
    return seal(std::move(e));
  }

  // testlist: test (',' test)* [','], a Tuple when there is a comma.
  ExprPtr testlist() {
    ExprPtr first = test();
    if (!is_op(tok_, ",")) return first;
    auto tuple = node(ExprKind::Tuple, first->loc);
    tuple->args.push_back(std::move(first));
    while (is_op(tok_, ",")) {
      advance();
      if (!starts_expression()) break;
      tuple->args.push_back(test());
    }
    return seal(std::move(tuple));
  }

  // The targets of `for`: expressions without comparisons (`in` ends them), a Tuple when there
  // is a comma.
  ExprPtr target_list() {
    ExprPtr first = binary(0);
    if (!is_op(tok_, ",")) return first;
    auto tuple = node(ExprKind::Tuple, first->loc);
    tuple->args.push_back(std::move(first));
    while (is_op(tok_, ",")) {
      advance();
      if (!starts_expression()) break;
      tuple->args.push_back(binary(0));
    }
    return seal(std::move(tuple));
  }

  // Refuses what cannot be assigned to: a name, an attribute, a subscript, or a tuple or list
  // of those. `single` refuses tuples and lists too (annotated and augmented assignment).
  void check_target(const Expr& e, bool single) const {
    switch (e.kind) {
      case ExprKind::Name:
      case ExprKind::Attribute:
      case ExprKind::Subscript: return;
      case ExprKind::Tuple:
      case ExprKind::List:
        if (!single) {
          for (const ExprPtr& a : e.args) check_target(*a, false);
          return;
        }
        break;
      default: break;
    }
    error_at(e, single ? "a name, an attribute or a subscript to assign to" : "an assignment target");
  }

  // ---- Statements ----

  StmtPtr stmt(StmtKind kind, const SourceLoc& where) {
    auto s = std::make_unique<Stmt>();
    s->kind = kind;
    s->loc = where;
    return s;
  }

  void statement(Block& out) {
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
  void simple_statements(Block& out) {
    out.push_back(small_statement());
    while (is_op(tok_, ";")) {
      advance();
      if (tok_.kind == TokenKind::Newline) break;
      out.push_back(small_statement());
    }
    expect_newline();
  }

  StmtPtr small_statement() {
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
  StmtPtr expression_statement(const SourceLoc& where) {
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
  StmtPtr import_statement() {
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
  void suite(Block& out) {
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
  StmtPtr if_statement() {
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
  StmtPtr loop() {
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
  StmtPtr with_statement() {
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
  StmtPtr def_statement() {
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
  StmtPtr class_statement() {
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

  Lexer lexer_;
  const std::string& file_;
  const ParseLimits& limits_;
  Token tok_;
  int depth_ = 0;
  std::unordered_map<const Expr*, int> heights_;  // of nodes above the leaves
};

}  // namespace

Module parse_source(std::string_view text, const std::string& file, const ParseLimits& limits) {
  if (text.size() > limits.max_source_bytes) {
    syntax_error(file, 1, 1, fmt::format("a file of {} bytes", text.size()),
                 fmt::format("at most {} bytes", limits.max_source_bytes));
  }
  return Parser(text, file, limits).parse_module();
}

}  // namespace kiln::frontend::torchscript
