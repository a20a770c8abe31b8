#include "cli/did_you_mean.h"

namespace warden::cli {

std::vector<std::string> SubcommandNames(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    out.push_back(sub->get_name());
  }
  return out;
}

std::string SuggestForExtras(const CLI::App& app) {
  // The deepest command given, and the flags it and its parents take.
  const CLI::App* deepest = &app;
  while (!deepest->get_subcommands().empty()) deepest = deepest->get_subcommands().front();
  std::vector<std::string> flags;
  for (const CLI::App* at = deepest; at != nullptr; at = at->get_parent()) {
    for (const CLI::Option* opt : at->get_options()) {
      for (const auto& name : opt->get_lnames()) flags.push_back("--" + name);
    }
  }
  const std::vector<std::string> commands = SubcommandNames(*deepest);
  for (const std::string& extra : app.remaining(/*recurse=*/true)) {
    const std::string typed = extra.substr(0, extra.find('='));  // --queu=q
    const std::string guess = Closest(typed, typed.rfind('-', 0) == 0 ? flags : commands);
    if (!guess.empty()) return "; did you mean '" + guess + "'?";
  }
  return "";
}

}  // namespace warden::cli
