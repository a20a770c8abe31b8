// warden.toml read into the flags' text (docs/configuration.md).
//
// ParseConfig checks what the file alone can tell: TOML syntax, sections,
// keys (an unknown one is an error, with the closest known key named) and
// each value's TOML type. It turns each value into the text its flag would
// take ("30s", "8", "true", "a,b"); what that text means (a duration, a
// range, an address) is the flag's own check, applied when a command uses
// the key (settings.h). Every error is InvalidArgument, one line:
// "FILE:LINE:COLUMN: <what>", the first problem in the file's order.
//
// Thread safety: pure functions (ReadConfig reads the file).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cli/config/config_keys.h"
#include "warden/status.h"

namespace warden::cli::config {

// A file larger than this is refused: no configuration needs it.
inline constexpr size_t kMaxConfigBytes = 1 << 20;

struct Position {
  int line = 0, column = 0;  // 1-based
};

// One value of the file, as its flag's text.
struct FileValue {
  const ConfigKey* key = nullptr;  // nullptr for a task
  std::string task;                // [tasks]: the task's name
  std::string text;                // a task: its command
  Position at;
};

struct ConfigFile {
  std::string path;               // as named, for messages
  std::vector<FileValue> values;  // in the file's order
  // The value of `key`, or nullptr.
  const FileValue* Find(const ConfigKey& key) const;
  std::vector<const FileValue*> Tasks() const;
};

// `text` is the file's content; `path` names it in messages.
Result<ConfigFile> ParseConfig(std::string_view text, const std::string& path);
// Reads and parses `path`. Reading it fails with NotFound (no such file)
// or FailedPrecondition (not readable, a directory); `from` says in that
// message who named the file ("--config", "WARDEN_CONFIG").
Result<ConfigFile> ReadConfig(const std::string& path, const std::string& from);

}  // namespace warden::cli::config
