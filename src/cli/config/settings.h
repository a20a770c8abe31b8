// Settings: each key's value from, in order of precedence, the command
// line, the environment (WARDEN_*), warden.toml, or the built-in default
// (docs/configuration.md).
//
// Nothing here parses a value: a value from the environment or the file is
// handed to the very CLI11 option its flag is (config_keys.h), as if it
// had been typed, so the flag's checks apply to it (CLI11's ranges at
// once; the command's own, such as durations, when it runs), and an error
// about it is then told by where the value came from (Attribute):
// "warden.toml:4:9: worker.lease: invalid duration 'soon': …",
// "WARDEN_WORKER_LEASE: invalid duration 'soon': …".
//
// Thread safety: none; the CLI's main thread, before the command runs.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/config/config_file.h"
#include "cli/config/config_keys.h"
#include "warden/status.h"

namespace warden::cli::config {

// Read when neither --config nor WARDEN_CONFIG names a file, and only if
// it exists.
inline constexpr char kDefaultConfigPath[] = "/etc/warden/warden.toml";

// A variable's value, or nullptr; an empty value counts as unset.
using EnvFn = std::function<const char*(const std::string& name)>;
// The process's environment.
EnvFn ProcessEnv();

struct Source {
  enum class Kind { kDefault, kFlag, kEnv, kFile };
  Kind kind = Kind::kDefault;
  std::string name;  // the flag, the variable, or the file's path
  Position at;       // kFile
  // "default", "flag --db", "env WARDEN_DB", "/etc/warden/warden.toml:3"
  std::string ToString() const;
};

// One key (or one task) of the command being run.
struct Applied {
  const ConfigKey* key = nullptr;  // nullptr: a task
  std::string task;
  Source source;
};

// Which file to read and who named it.
struct ConfigLocation {
  std::string path;
  std::string from;  // "--config", "WARDEN_CONFIG", "the default path", "the argument"
};
// --config (when given), else WARDEN_CONFIG, else `default_path` when it
// exists (anything there, even one that cannot be read: it is then an
// error, not ignored); nullopt when there is no file to read.
std::optional<ConfigLocation> LocateConfig(const std::optional<std::string>& flag,
                                           const EnvFn& env, const std::string& default_path);

class Settings {
 public:
  // The file read, or none.
  const std::optional<ConfigLocation>& file() const { return file_; }
  const std::vector<Applied>& applied() const { return applied_; }
  const Applied* Find(const ConfigKey& key) const;

  // Reads the file `location` names (none: nullopt).
  static Result<Settings> Read(std::optional<ConfigLocation> location);
  // The keys of `section` onto the options of `cmd` (the command that
  // section configures, or the top-level app for [store]); [tasks] goes
  // with [worker]. An option given on the command line keeps its value;
  // else the environment's, else the file's is fed to it.
  Status Apply(CLI::App& cmd, std::string_view section, const EnvFn& env);

  // `s`, told as its reader should see it: a message that starts with the
  // flag of a key whose value came from the environment or the file names
  // that source instead of the flag. Other messages are left as they are.
  // With `section`, only that section's keys (flags repeat across
  // commands: --log-format).
  Status Attribute(const Status& s, std::string_view section = "") const;

 private:
  Status ApplyKey(CLI::App& cmd, const ConfigKey& key, const EnvFn& env);
  Status ApplyTasks(CLI::App& cmd);

  std::optional<ConfigLocation> file_;
  std::optional<ConfigFile> parsed_;
  std::vector<Applied> applied_;
};

}  // namespace warden::cli::config
