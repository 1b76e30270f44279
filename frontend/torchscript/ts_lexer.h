// The tokenizer of TorchScript's serialized code: Python's tokens and indentation rules for the
// subset that python_print.cpp writes. The parser (ts_parser.cpp) pulls one token at a time, so
// the lexer never runs far ahead of a parse that has already failed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::frontend::torchscript {

enum class TokenKind {
  Name,     // an identifier that is not a keyword, in `text`
  Keyword,  // a Python keyword (`if`, `not`, `None`, ...), in `text`
  Int,      // `int_value`; `text` holds the source spelling
  Float,    // `float_value`; `text` holds the source spelling
  String,   // `text` holds the decoded value
  Op,       // punctuation or an operator, in `text`: "(", "**", "->", "+=", "..."
  Newline,  // the end of a logical line
  Indent,   // the start of a more indented block
  Dedent,   // the end of an indented block (one per level closed)
  End,      // the end of the file, after the last Newline and Dedents
};

struct Token {
  TokenKind kind = TokenKind::End;
  std::string text;
  int64_t int_value = 0;
  double float_value = 0;
  int line = 1;    // 1-based
  int column = 1;  // 1-based, in bytes
};

// Throws kiln::Error "FILE:LINE:COLUMN: found FOUND, expected EXPECTED".
[[noreturn]] void syntax_error(const std::string& file, int line, int column, std::string_view found,
                               std::string_view expected);

// How a token is named in messages: "name 'x'", "'('", "the end of the line".
std::string describe(const Token& token);

class Lexer {
 public:
  Lexer(std::string_view text, const std::string& file) : text_(text), file_(file) {}

  // The next token. Blank lines and comments give none; lines inside (), [] and {} and lines
  // ended by a backslash join the next. Indentation is spaces only (python_print writes two
  // per level); a tab there is an error. Throws kiln::Error on text that is not a token.
  Token next();

  const std::string& file() const { return file_; }

 private:
  struct Bracket {
    char open;
    int line;
    int column;
  };

  bool at_end() const { return pos_ >= text_.size(); }
  char peek(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
  int column() const;
  // Consumes a line break ("\n", "\r\n" or "\r") at pos_.
  void newline();
  bool at_newline() const { return peek() == '\n' || peek() == '\r'; }
  [[noreturn]] void error_here(std::string_view found, std::string_view expected) const;

  // Reads the indentation of the next line that has a token; when it changes, `token` is the
  // Indent or the first Dedent (the rest wait in pending_dedents_).
  enum class Indentation { Same, Changed, EndOfFile };
  Indentation read_indentation(Token& token);
  void skip_blanks();  // spaces, tabs, comments and backslash continuations inside a line
  Token end_of_file();
  Token number();
  Token string_literal(size_t prefix_length, bool raw);
  void escape(std::string& out);  // at a backslash in a string that is not raw
  Token name_or_keyword();
  Token op();

  std::string_view text_;
  std::string file_;
  size_t pos_ = 0;
  size_t line_start_ = 0;  // offset of the first byte of the current line
  int line_ = 1;
  bool at_line_start_ = true;  // no token yet on this logical line
  int pending_dedents_ = 0;
  std::vector<int> indents_{0};
  std::vector<Bracket> brackets_;
};

}  // namespace kiln::frontend::torchscript
