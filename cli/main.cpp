// kiln: an ahead-of-time compiler for neural-network inference.
#include <cstdio>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "ir/error.h"

int main(int argc, char** argv) {
  CLI::App app{"kiln: compiles trained models into standalone executables and libraries"};
  app.set_version_flag("--version", "kiln " KILN_VERSION_STRING);
  app.require_subcommand(1);
  std::vector<kiln::cli::Command> commands = {kiln::cli::add_compile_command(app),
                                              kiln::cli::add_run_command(app),
                                              kiln::cli::add_inspect_command(app),
                                              kiln::cli::add_bench_command(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    for (const kiln::cli::Command& c : commands)
      if (c.app->parsed()) return c.run();
  } catch (const std::exception& e) {
    fmt::print(stderr, "kiln: error: {}\n", e.what());
  }
  return 1;
}
