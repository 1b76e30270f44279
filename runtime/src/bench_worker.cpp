#include "kiln/rt/bench_worker.h"

#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>

namespace kiln::rt {
namespace {

bool read_line(std::FILE* in, std::string& line) {
  line.clear();
  int c;
  while ((c = std::fgetc(in)) != EOF && c != '\n') line += static_cast<char>(c);
  return c != EOF || !line.empty();
}

void reply(std::FILE* out, const std::string& text) {
  std::fputs(text.c_str(), out);
  std::fputc('\n', out);
  std::fflush(out);
}

// One request; returns false on "quit".
bool answer(const std::string& line, const BenchHooks& hooks, std::FILE* out) {
  if (line == "quit") return false;
  if (line.rfind("run ", 0) == 0) {
    char* end = nullptr;
    const long n = std::strtol(line.c_str() + 4, &end, 10);
    if (*end != '\0' || n < 1 || n > 100000000L) throw std::runtime_error("bad request '" + line + "'");
    std::string times = "times";
    char buf[32];
    for (long i = 0; i < n; ++i) {
      std::snprintf(buf, sizeof buf, " %.6f", hooks.run_ms());
      times += buf;
    }
    reply(out, times);
    return true;
  }
  if (line.rfind("outputs ", 0) == 0) {
    hooks.write_outputs(line.substr(8));
    reply(out, "ok");
    return true;
  }
  throw std::runtime_error("unknown request '" + line + "'");
}

}  // namespace

int serve_bench(double cold_ms, const BenchHooks& hooks, std::FILE* in, std::FILE* out) noexcept {
  try {
    char buf[64];
    std::snprintf(buf, sizeof buf, "ready %.6f", cold_ms);
    reply(out, buf);
    std::string line;
    while (read_line(in, line))
      if (!answer(line, hooks, out)) return 0;
    return 0;
  } catch (const std::exception& e) {
    reply(out, std::string("error ") + e.what());
  } catch (...) {
    reply(out, "error unknown failure");
  }
  return 1;
}

}  // namespace kiln::rt
