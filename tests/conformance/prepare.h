// One case's work before anything is compiled, run in a forked child: import the model, run
// the reference interpreter on each data set and compare, then optimize it with the case's
// static input shapes and generate its C++ sources for a batch build. What happened is
// written, line by line as it happens, to a result file the parent reads.
#pragma once

#include <map>
#include <string>

#include "tests/conformance/cases.h"

namespace kiln::conformance {

struct PrepareRequest {
  const Case* c = nullptr;
  std::string work_dir;    // this case's folder (created)
  std::string model_name;  // C identifier for the generated code
  bool interpret = true;   // false: only the compiled path's preparation
  bool freeze = true;      // may compile int64 inputs as constants (see generate_case)
};

// The child's entry point; returns its exit code. Writes work_dir/prepare.txt.
int prepare_case(const PrepareRequest& request);

// The lines of a result file: key -> "outcome\tdetail" (or any value). Missing file: empty.
std::map<std::string, std::string> read_result_file(const std::string& path);
// Appends one "key\tvalue" line (newlines in value escaped) and flushes it to disk.
void append_result(const std::string& path, const std::string& key, const std::string& value);

}  // namespace kiln::conformance
