#include "codegen/cpp/target.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "ir/error.h"

namespace kiln::codegen::cpp {

namespace {

// Whether `program` (a name looked up in $PATH, or a path) is an executable file.
bool on_path(const std::string& program) {
  if (program.find('/') != std::string::npos) return access(program.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "";
  while (true) {
    const size_t colon = dirs.find(':');
    std::string_view dir = dirs.substr(0, colon);
    const std::filesystem::path candidate = std::filesystem::path(dir.empty() ? "." : std::string(dir)) / program;
    if (access(candidate.c_str(), X_OK) == 0) return true;
    if (colon == std::string_view::npos) return false;
    dirs.remove_prefix(colon + 1);
  }
}

}  // namespace

const std::vector<Target>& known_targets() {
  static const std::vector<Target> targets = {
      {"x86_64-linux-gnu", "g++-x86-64-linux-gnu", {"x86-64-v2", "x86-64-v3"}},
      {"aarch64-linux-gnu", "g++-aarch64-linux-gnu", {}},
  };
  return targets;
}

std::string known_triples() {
  std::vector<std::string_view> names;
  for (const Target& t : known_targets()) names.push_back(t.triple);
  return fmt::format("{}", fmt::join(names, ", "));
}

const Target* host_target() {
#if defined(__x86_64__)
  return &find_target("x86_64-linux-gnu");
#elif defined(__aarch64__)
  return &find_target("aarch64-linux-gnu");
#else
  return nullptr;
#endif
}

const Target& find_target(std::string_view triple) {
  for (const Target& t : known_targets())
    if (t.triple == triple) return t;
  fail("--target {}: unknown target (known: {})", triple, known_triples());
}

std::string march_for(const Target& target, const std::string& cpu) {
  if (cpu == "generic") return "";
  const bool host = &target == host_target();
  if (cpu == "native") {
    if (host) return "native";
    fail("--cpu native: {} is not this machine's architecture; use --cpu generic{}", target.triple,
         target.levels.empty() ? "" : fmt::format(" or {}", fmt::join(target.levels, ", ")));
  }
  for (std::string_view level : target.levels)
    if (level == cpu) return cpu;
  fail("--cpu {}: not a CPU of {} (expected generic{}{})", cpu, target.triple, host ? ", native" : "",
       target.levels.empty() ? "" : fmt::format(", {}", fmt::join(target.levels, ", ")));
}

Toolchain toolchain_for(const Target& target) {
  if (&target == host_target()) {
    const char* cxx = std::getenv("CXX");
    return {cxx && *cxx ? cxx : "c++", "ar"};
  }
  Toolchain tc{fmt::format("{}-g++", target.triple), fmt::format("{}-ar", target.triple)};
  if (!on_path(tc.cxx))
    fail("--target {}: its C++ compiler '{}' is not installed (on Debian: apt-get install {})", target.triple, tc.cxx,
         target.debian_package);
  if (!on_path(tc.ar))
    fail("--target {}: its archiver '{}' is not installed (on Debian: apt-get install binutils-{})", target.triple,
         tc.ar, target.debian_package.substr(4));
  return tc;
}

}  // namespace kiln::codegen::cpp
