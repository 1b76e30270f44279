#include "kiln/rt/sanitize.h"

namespace kiln::rt {

std::string sanitize_file_name(const std::string& name) {
  std::string out = name;
  for (char& ch : out) {
    const bool ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' ||
                    ch == '.' || ch == '-';
    if (!ok) ch = '_';
  }
  if (out.empty()) return "_";
  if (out == ".") return "_";
  if (out == "..") return "__";
  return out;
}

}  // namespace kiln::rt
