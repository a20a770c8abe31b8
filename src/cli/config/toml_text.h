// Writing TOML: what `warden config check` prints is itself a valid
// warden.toml (passwords aside, shown as ***), so keys and strings are
// quoted and escaped as TOML requires, whatever bytes they hold.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "warden/warden.h"  // Json

namespace warden::cli::config {

// A basic string: "..." with \" \\ and control characters escaped; bytes
// that are not UTF-8 (a value from the environment) as U+FFFD.
std::string TomlString(std::string_view text);
// A key: bare when it may be (A-Z a-z 0-9 _ -), else a quoted string.
std::string TomlKey(std::string_view key);
// A string, integer, boolean or array of strings (null: "").
std::string TomlValue(const Json& value);

}  // namespace warden::cli::config
