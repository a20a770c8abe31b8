// "Did you mean" for the command line: the closest known command or flag
// to a mistyped one (`warden stat` -> 'stats', `add --queu` -> '--queue'),
// through warden/did_you_mean.h's Closest.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "warden/did_you_mean.h"  // Closest, EditDistance

namespace warden::cli {

// For CLI11's "argument was not expected" error after `app` parsed:
// "; did you mean 'X'?" for the first unexpected argument that is close to
// a flag (it starts with '-') or a subcommand of the deepest command
// given, else "".
std::string SuggestForExtras(const CLI::App& app);

// Every subcommand name of `app`.
std::vector<std::string> SubcommandNames(const CLI::App& app);

}  // namespace warden::cli
