// Chrome trace event files (the JSON that chrome://tracing and Perfetto open), written by
// a compiled executable's --profile.
#pragma once

#include <string>
#include <vector>

namespace kiln::rt {

// One complete ("ph": "X") event: a node's kernel call or a whole run.
struct TraceEvent {
  std::string name;      // the node's name, or "run"
  std::string category;  // the node's op type, or "run"
  double ts_us;          // start, microseconds since the first run began
  double dur_us;
  int run;               // which run (0-based)
};

// `s` as a JSON string literal, quotes included.
std::string json_string(const std::string& s);

// Writes {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}} to `path`:
// the events on one thread of one process named `process_name`, each with args
// {"op": category, "run": run}. Returns false with `error` set on failure.
bool write_chrome_trace(const std::string& path, const std::string& process_name, int threads,
                        const std::vector<TraceEvent>& events, std::string& error);

}  // namespace kiln::rt
