// The stderr lines of the CLI's long-running commands (`warden worker`,
// `warden serve`, `warden wait`, `warden demo`): text ("warden: <message>"), or with `--log-format
// json` one JSON object a line (warden/log.h), the command's last error included, so that a log
// pipeline reads every line the same way.
//
// Thread safety: SetLogFormat before any thread starts; LogOut from any
// thread (one write(2) per line).
#pragma once

#include <string>

#include "warden/warden.h"

namespace warden::cli {

// `context`: the keys that say who writes (warden/log.h), e.g.
// {"component": "serve"}.
void SetLogFormat(LogFormat format, Json context = Json::object());
LogFormat CurrentLogFormat();
// `--log-format`'s value ("text" or "json") made the format, with
// `context`; InvalidArgument (exit 2) for another value, the format left
// as it was.
Status UseLogFormat(const std::string& flag_value, Json context);
// Whether the raw arguments ask for `--log-format json` (or
// `--log-format=json`): set before parsing, so that a usage error of such
// a command is a JSON line too.
bool WantsJsonLogs(int argc, char** argv);

// One line on stderr: "warden: <message>", or the JSON line.
void LogOut(LogLevel level, const std::string& message, JobId job = 0);

}  // namespace warden::cli
