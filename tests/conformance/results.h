// What became of each case on each path.
#pragma once

#include <string>
#include <vector>

#include "tests/conformance/cases.h"

namespace kiln::conformance {

enum class Outcome { NotRun, Pass, Fail, Unsupported };

const char* outcome_name(Outcome o);  // "not run", "pass", "fail", "unsupported"

struct PathResult {
  Outcome outcome = Outcome::NotRun;
  std::string detail;  // fail: where and how much; unsupported: kiln's error text
};

struct CaseResult {
  Case c;
  std::string model;     // C identifier of the generated code, and the case's work folder name
  std::string work_dir;  // absolute
  PathResult interp;
  PathResult compiled;
  bool sources_ready = false;  // the compiled path's sources were generated
  std::string constant_inputs; // "constant inputs: 'shape'" when int64 inputs were compiled as constants
  std::string exe;             // the batch executable that holds this model, once built
  bool passes_both() const { return interp.outcome == Outcome::Pass && compiled.outcome == Outcome::Pass; }
};

}  // namespace kiln::conformance
