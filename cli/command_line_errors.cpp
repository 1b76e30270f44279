#include "cli/command_line_errors.h"

#include <algorithm>

#include <fmt/format.h>

#include "ir/error.h"

namespace kiln::cli {

namespace {

// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
// neighbouring characters each cost one.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
  return names;
}

const CLI::App* parsed_command(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (sub->parsed()) return sub;
  return nullptr;
}

// "--emit", "-o", ... of a command (and --help).
std::vector<std::string> option_names(const CLI::App& cmd) {
  std::vector<std::string> names;
  for (const CLI::Option* o : cmd.get_options()) {
    for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
    for (const std::string& n : o->get_snames()) names.push_back("-" + n);
  }
  return names;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string match = closest_match(word, candidates);
  return match.empty() ? "" : fmt::format(" (did you mean '{}'?)", match);
}

std::string help_hint(const CLI::App* cmd) {
  return cmd ? fmt::format("see 'kiln {} --help'", cmd->get_name()) : "see 'kiln --help'";
}

}  // namespace

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = 0;
  for (const std::string& c : candidates) {
    const size_t d = edit_distance(word, c);
    if (best.empty() || d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  // A third of the word may be wrong, at most 3 characters, and never all of a short one.
  const size_t limit = std::min<size_t>(3, std::max<size_t>(1, word.size() / 3));
  return !best.empty() && best_distance <= limit ? best : "";
}

void check_command_line(const CLI::App& app, int argc, const char* const* argv) {
  const CLI::App* cmd = parsed_command(app);
  const std::vector<std::string> commands = command_names(app);
  if (!cmd) {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a.empty() || a[0] == '-') continue;
      fail("unknown command '{}'{}; the commands are {} ({})", a, did_you_mean(a, commands), fmt::join(commands, ", "),
           help_hint(nullptr));
    }
    for (const std::string& a : app.remaining())
      fail("unknown option '{}'{} ({})", a, did_you_mean(a, option_names(app)), help_hint(nullptr));
    fail("a command is required: {} ({})", fmt::join(commands, ", "), help_hint(nullptr));
  }
  std::vector<std::string> extras = cmd->remaining();
  for (const std::string& a : app.remaining()) extras.push_back(a);
  for (const std::string& a : extras) {
    if (a.size() > 1 && a[0] == '-') {
      const std::string name = a.substr(0, a.find('='));
      fail("{}: unknown option '{}'{} ({})", cmd->get_name(), name, did_you_mean(name, option_names(*cmd)), help_hint(cmd));
    }
  }
  if (!extras.empty())
    fail("{}: unexpected argument '{}' ({})", cmd->get_name(), extras.front(), help_hint(cmd));
}

std::string describe_parse_error(const CLI::App& app, const CLI::ParseError& e) {
  std::string message = e.what();
  std::replace(message.begin(), message.end(), '\n', ' ');
  while (!message.empty() && (message.back() == ' ' || message.back() == '.')) message.pop_back();
  if (!message.empty()) message[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(message[0])));
  const CLI::App* cmd = parsed_command(app);
  return cmd ? fmt::format("{}: {} ({})", cmd->get_name(), message, help_hint(cmd))
             : fmt::format("{} ({})", message, help_hint(nullptr));
}

}  // namespace kiln::cli
