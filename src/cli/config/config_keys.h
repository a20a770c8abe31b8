// The keys of warden.toml (docs/configuration.md): each is a flag of the
// command its section configures, under the flag's name in snake case
// (`[worker] keepalive_threshold` is `warden worker --keepalive-threshold`),
// so a value from the file or the environment goes through that flag's
// own parsing and checks. `[tasks]` is the map that `warden worker --task
// NAME=COMMAND` builds.
//
// Thread safety: constant data.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace warden::cli::config {

// How a TOML value becomes the flag's text.
enum class ValueKind {
  kString,    // "..."
  kDuration,  // "1h30m": a string the flag's duration parser reads
  kInteger,   // 8: decimal text
  kBool,      // true / false
  kQueues,    // ["a", "b"]: joined with commas, as --queues takes them
};

struct ConfigKey {
  std::string_view section;  // "worker"
  std::string_view flag;     // "--keepalive-threshold"
  ValueKind kind;
  std::string name() const;  // "keepalive_threshold"
  std::string dotted() const;  // "worker.keepalive_threshold"
  // WARDEN_<SECTION>_<NAME>: WARDEN_WORKER_KEEPALIVE_THRESHOLD; the store's
  // one key keeps the variable it always had, WARDEN_DB.
  std::string env() const;
};

// Every key, in the order `warden config check` prints them.
const std::vector<ConfigKey>& ConfigKeys();
// The sections, in that order: store, worker, tasks, server.
const std::vector<std::string>& ConfigSections();
// nullptr if `section` has no such key.
const ConfigKey* FindKey(std::string_view section, std::string_view name);
std::vector<std::string> KeyNames(std::string_view section);

}  // namespace warden::cli::config
