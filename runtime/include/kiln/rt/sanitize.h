// File names derived from tensor names (shared with the kiln command line).
#pragma once

#include <string>

namespace kiln::rt {

// Every character outside [A-Za-z0-9_.-] becomes '_'. An empty name becomes
// "_", and the names "." and ".." become "_" and "__", so that the result is
// always a plain file name inside the directory it is joined to.
std::string sanitize_file_name(const std::string& name);

}  // namespace kiln::rt
