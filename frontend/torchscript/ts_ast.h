// The syntax tree of TorchScript's serialized code (code/__torch__/**.py in a TorchScript
// archive): the subset of Python that torch/csrc/jit/serialization/python_print.cpp writes.
// The parser (ts_parser.h) builds it; the lowering (ts_lowering.h) walks it. Nothing here
// evaluates anything.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln::frontend::torchscript {

// Where a construct stands in its source file, for messages ("code/__torch__/m.py:12").
struct SourceLoc {
  std::string file;  // the archive entry, e.g. "code/__torch__/torchvision/models/resnet.py"
  int line = 0;      // 1-based
  int column = 0;    // 1-based
};

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using Block = std::vector<StmtPtr>;

enum class ExprKind {
  Name,       // `x`, `self`, `torch`, `CONSTANTS`, `__torch__`, `None`/`True`/`False` are literals
  Int,        // 3, -1 is Unary(Neg, Int 1)
  Float,      // 1.0000000000000001e-05, inf and nan come as calls float("inf")
  String,     // "abc" or 'abc', escapes decoded
  None,
  Bool,
  Attribute,  // value.attr
  Call,       // func(args, name=value)
  Subscript,  // value[index]; index may be a Tuple or a Slice
  Slice,      // a:b:c inside a subscript; absent parts are null
  Tuple,      // (a, b) and (a,) and ()
  List,       // [a, b]
  Dict,       // {k: v}
  Unary,      // -x, not x, ~x, +x
  Binary,     // arithmetic and bitwise
  Compare,    // a < b, a is None, a is not None, a in b (one operator; chains are rejected)
  BoolOp,     // a and b, a or b
  IfExp,      // a if c else b
};

enum class Op {
  // Unary
  Neg, Pos, Not, Invert,
  // Binary
  Add, Sub, Mul, Div, FloorDiv, Mod, Pow, MatMul, BitAnd, BitOr, BitXor, LShift, RShift,
  // Compare
  Eq, Ne, Lt, Le, Gt, Ge, Is, IsNot, In, NotIn,
  // BoolOp
  And, Or,
};

struct Keyword {
  std::string name;
  ExprPtr value;
};

struct Expr {
  ExprKind kind;
  SourceLoc loc;
  std::string name;      // Name: identifier; Attribute: attribute name; String: decoded text
  int64_t int_value = 0; // Int (and Bool: 0/1)
  double float_value = 0;
  Op op = Op::Add;       // Unary, Binary, Compare, BoolOp
  // Children, by kind:
  //   Attribute: [value]          Call: [func, positional args...]
  //   Subscript: [value, index]   Slice: [lower, upper, step] (each may be null)
  //   Tuple/List: elements        Dict: [k0, v0, k1, v1, ...]
  //   Unary: [operand]            Binary/Compare/BoolOp: [left, right]
  //   IfExp: [body, test, orelse]
  std::vector<ExprPtr> args;
  std::vector<Keyword> keywords;  // Call only, in source order
};

enum class StmtKind {
  Expr,       // an expression evaluated for its effect: `torch.append(l, x)`
  Assign,     // targets = value; a target is a Name, a Tuple/List of targets, an Attribute
              // (self.x = v) or a Subscript (d[k] = v)
  AnnAssign,  // `training : bool` (class body) or `x : int = 3`; value may be null
  AugAssign,  // x += 1 (op in `aug_op`)
  Return,     // value may be null
  Pass,
  Break,
  Continue,
  If,         // test, body, orelse (elif becomes a nested If in orelse)
  While,      // test, body
  For,        // target in iter: body
  Raise,      // value may be null
  Assert,     // test, message may be null
  With,       // `with item as target:` body (items as Calls)
  Def,        // a function or method (see FunctionDef)
  Class,      // a class (see ClassDef)
  Import,     // `import torch` / `from x import y` lines at the top of older files: ignored
};

struct Param {
  std::string name;
  ExprPtr annotation;  // may be null (self in some versions)
  ExprPtr default_value;  // may be null
  SourceLoc loc;
};

struct FunctionDef {
  std::string name;
  std::vector<Param> params;
  ExprPtr returns;  // may be null
  Block body;
  SourceLoc loc;
};

struct ClassDef {
  std::string name;
  std::vector<ExprPtr> bases;  // `Module`, `Enum`, `NamedTuple`...
  Block body;                  // AnnAssign, Assign (__parameters__ = [...]), Def, Pass
  SourceLoc loc;
};

struct Stmt {
  StmtKind kind;
  SourceLoc loc;
  std::vector<ExprPtr> targets;  // Assign: one or more `=` targets (a = b = v); AnnAssign/For/With: one
  ExprPtr value;                 // Expr/Assign/AnnAssign/AugAssign/Return/Raise value; If/While/Assert test;
                                 // For iterable; With item
  ExprPtr annotation;            // AnnAssign
  ExprPtr message;               // Assert
  Op aug_op = Op::Add;           // AugAssign
  Block body;                    // If/While/For/With
  Block orelse;                  // If (and While/For `else`, rejected by the lowering)
  std::unique_ptr<FunctionDef> def;  // Def
  std::unique_ptr<ClassDef> cls;     // Class
};

// One parsed source file.
struct Module {
  std::string file;
  Block body;  // top level: Class, Def, Assign (module constants), Import
};

}  // namespace kiln::frontend::torchscript
