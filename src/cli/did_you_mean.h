// "Did you mean": the closest known command or flag to a mistyped one, for
// usage errors (`warden stat` -> 'stats', `add --queu` -> '--queue').
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace warden::cli {

// Edits (insert, delete, replace one character, or swap two adjacent ones)
// that turn `a` into `b`.
size_t EditDistance(std::string_view a, std::string_view b);

// The candidate closest to `typed`, if close enough to be a typo: at most
// one edit for a word of up to four characters (leading dashes not
// counted), two for a longer one; ties go to the first. "" if none.
std::string Closest(std::string_view typed, const std::vector<std::string>& candidates);

// For CLI11's "argument was not expected" error after `app` parsed:
// "; did you mean 'X'?" for the first unexpected argument that is close to
// a flag (it starts with '-') or a subcommand of the deepest command
// given, else "".
std::string SuggestForExtras(const CLI::App& app);

// Every subcommand name of `app`.
std::vector<std::string> SubcommandNames(const CLI::App& app);

}  // namespace warden::cli
