#include "cli/bench_adapters.h"

#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "cli/child_process.h"
#include "ir/error.h"

namespace kiln::cli {

namespace fs = std::filesystem;

const std::vector<std::string>& known_engines() {
  static const std::vector<std::string> engines = {"onnxruntime", "torch", "tensorflow"};
  return engines;
}

std::string python_interpreter(const std::string& option) {
  if (!option.empty()) return option;
  if (const char* p = std::getenv("KILN_PYTHON"); p && *p) return p;
  return "python3";
}

fs::path write_adapter(const fs::path& dir, const std::string& engine) {
  fs::create_directories(dir);
  for (const codegen::cpp::EmbeddedFile& f : bench_adapter_files()) {
    std::ofstream out(dir / std::string(f.path), std::ios::binary);
    out.write(f.data.data(), static_cast<std::streamsize>(f.data.size()));
    if (!out) fail("{}: cannot write", (dir / std::string(f.path)).string());
  }
  fs::path script = dir / (engine + "_adapter.py");
  if (!fs::exists(script)) fail("no adapter for engine '{}' (known: onnxruntime, torch, tensorflow)", engine);
  return script;
}

std::string probe_engine(const std::string& python, const fs::path& adapter, const fs::path& log,
                         std::string& reason) {
  std::string line;
  int status = -1;
  try {
    ChildProcess child({python, adapter.string(), "--probe"}, log);
    try {
      line = child.read_line("probe");
    } catch (const Error&) {
      line.clear();
    }
    status = child.wait();
  } catch (const Error& e) {  // no such python
    reason = e.what();
    return "";
  }
  if (status == 0 && line.rfind("ok ", 0) == 0) return line.substr(3);
  std::string tail = tail_of(log, 1);
  reason = status == 3 ? tail : fmt::format("'{} {}' failed (exit status {}){}{}", python, adapter.filename().string(),
                                            status, tail.empty() ? "" : ": ", tail);
  if (reason.empty()) reason = "cannot be imported";
  return "";
}

}  // namespace kiln::cli
