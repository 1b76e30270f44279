// A small, bounded JSON reader for the documents inside .pt2 archives (the ExportedProgram,
// the weights and constants configs). The input is untrusted: the size, the nesting depth
// and the number of values are limited, strings are checked UTF-8 with \u escapes and
// surrogate pairs decoded, and duplicate object keys are refused. Besides RFC 8259 it
// accepts the bare NaN, Infinity and -Infinity that Python's json module writes by default.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::frontend::torch_export {

struct JsonLimits {
  uint64_t max_bytes = uint64_t{1} << 31;  // the document
  int max_depth = 100;                     // arrays and objects inside one another
  uint64_t max_values = uint64_t{1} << 26;  // values of any kind in the document
};

enum class JsonKind { Null, Bool, Number, String, Array, Object };

class JsonValue {
 public:
  JsonKind kind() const { return kind_; }
  bool is_null() const { return kind_ == JsonKind::Null; }
  bool is_bool() const { return kind_ == JsonKind::Bool; }
  bool is_number() const { return kind_ == JsonKind::Number; }
  // A number written without fraction or exponent that fits an int64.
  bool is_integer() const { return kind_ == JsonKind::Number && is_int_; }
  bool is_string() const { return kind_ == JsonKind::String; }
  bool is_array() const { return kind_ == JsonKind::Array; }
  bool is_object() const { return kind_ == JsonKind::Object; }

  bool boolean() const { return b_; }
  double number() const { return number_; }
  int64_t integer() const { return int_; }
  const std::string& string() const { return s_; }
  const std::vector<JsonValue>& items() const { return items_; }              // Array
  const std::vector<std::pair<std::string, JsonValue>>& members() const {     // Object, in order
    return members_;
  }
  // The member `key` of an object, or nullptr (also when this is not an object).
  const JsonValue* find(std::string_view key) const;

 private:
  friend class JsonParser;
  JsonKind kind_ = JsonKind::Null;
  bool b_ = false;
  bool is_int_ = false;
  double number_ = 0;
  int64_t int_ = 0;
  std::string s_;
  std::vector<JsonValue> items_;
  std::vector<std::pair<std::string, JsonValue>> members_;
};

// "null", "bool", "number", "string", "array", "object".
std::string_view json_kind_name(JsonKind kind);

// Parses one JSON document (surrounding whitespace allowed). Throws kiln::Error as
// "<where>: line L, column C: <problem>".
JsonValue parse_json(std::string_view text, const std::string& where, const JsonLimits& limits = {});

}  // namespace kiln::frontend::torch_export
