#include "kiln/rt/trace.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace kiln::rt {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);  // UTF-8 passes through; invalid bytes are the model's
    }
  }
  return out + "\"";
}

bool write_chrome_trace(const std::string& path, const std::string& process_name, int threads,
                        const std::vector<TraceEvent>& events, std::string& error) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    error = path + ": cannot write the profile: " + std::strerror(errno);
    return false;
  }
  std::fprintf(f, "{\"traceEvents\": [\n");
  std::fprintf(f, "  {\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 1, \"args\": {\"name\": %s}},\n",
               json_string(process_name).c_str());
  std::fprintf(f, "  {\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 1, \"args\": {\"name\": \"run\"}}");
  for (const TraceEvent& e : events)
    std::fprintf(f,
                 ",\n  {\"name\": %s, \"cat\": %s, \"ph\": \"X\", \"ts\": %.3f, \"dur\": %.3f, \"pid\": 1, "
                 "\"tid\": 1, \"args\": {\"op\": %s, \"run\": %d}}",
                 json_string(e.name).c_str(), json_string(e.category).c_str(), e.ts_us, e.dur_us,
                 json_string(e.category).c_str(), e.run);
  std::fprintf(f, "\n],\n\"displayTimeUnit\": \"ms\",\n\"otherData\": {\"model\": %s, \"threads\": %d, \"generator\": \"kiln\"}}\n",
               json_string(process_name).c_str(), threads);
  const bool ok = std::ferror(f) == 0;
  if (std::fclose(f) != 0 || !ok) {
    error = path + ": cannot write the profile";
    return false;
  }
  return true;
}

}  // namespace kiln::rt
