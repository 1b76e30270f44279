// kiln: an ahead-of-time compiler for neural-network inference.
#include <cstdio>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/command_line_errors.h"
#include "cli/commands.h"
#include "cli/interrupt.h"
#include "ir/error.h"
#include "kiln_commit.h"

int main(int argc, char** argv) {
  kiln::cli::install_interrupt_cleanup();
  CLI::App app{"kiln: compiles trained models into standalone executables and libraries"};
  app.set_version_flag("--version", "kiln " KILN_VERSION_STRING " (commit " KILN_COMMIT ")");
  std::vector<kiln::cli::Command> commands = {kiln::cli::add_compile_command(app),
                                              kiln::cli::add_run_command(app),
                                              kiln::cli::add_inspect_command(app),
                                              kiln::cli::add_bench_command(app)};
  // Unexpected arguments are collected rather than thrown, so that the error can suggest
  // what was meant (cli/command_line_errors.h).
  app.allow_extras();
  for (const kiln::cli::Command& c : commands) c.app->allow_extras();
  try {
    app.parse(argc, argv);
    kiln::cli::check_command_line(app, argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "kiln: error: {}\n", kiln::cli::describe_parse_error(app, e));
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "kiln: error: {}\n", e.what());
    return 1;
  }
  int status = 1;
  try {
    for (const kiln::cli::Command& c : commands)
      if (c.app->parsed()) status = c.run();
  } catch (const std::exception& e) {
    kiln::cli::wait_if_interrupted();
    fmt::print(stderr, "kiln: error: {}\n", e.what());
  }
  kiln::cli::wait_if_interrupted();
  return status;
}
