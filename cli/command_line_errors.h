// Command-line mistakes as kiln reports every error: one line after "kiln: error:", exit
// status 1, and for a misspelt command or option the nearest correct one.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace kiln::cli {

// After app.parse (with allow_extras set on the app and its commands): fails when no command
// was given or an argument was not expected, naming what was probably meant.
void check_command_line(const CLI::App& app, int argc, const char* const* argv);

// The one-line text for a CLI11 parse error (a missing or malformed value).
std::string describe_parse_error(const CLI::App& app, const CLI::ParseError& e);

// The candidate closest to `word` by edit distance (a transposition counts one), or "" if
// none is close enough to be a likely typo.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace kiln::cli
