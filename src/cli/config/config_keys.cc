#include "cli/config/config_keys.h"

#include <algorithm>
#include <cctype>

namespace warden::cli::config {

std::string ConfigKey::name() const {
  std::string out(flag.substr(2));
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

std::string ConfigKey::dotted() const { return std::string(section) + "." + name(); }

std::string ConfigKey::env() const {
  if (section == "store" && flag == "--db") return "WARDEN_DB";
  std::string out = "WARDEN_";
  out += section;
  out += '_';
  out += name();
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

const std::vector<ConfigKey>& ConfigKeys() {
  using K = ValueKind;
  static const std::vector<ConfigKey> keys = {
      {"store", "--db", K::kString},
      {"worker", "--queues", K::kQueues},
      {"worker", "--node", K::kString},
      {"worker", "--concurrency", K::kInteger},
      {"worker", "--allow-cmd", K::kBool},
      {"worker", "--heartbeat", K::kDuration},
      {"worker", "--lease", K::kDuration},
      {"worker", "--keepalive-threshold", K::kDuration},
      {"worker", "--sweep-interval", K::kDuration},
      {"worker", "--shutdown-timeout", K::kDuration},
      {"worker", "--start-timeout", K::kDuration},
      {"worker", "--kill-grace", K::kDuration},
      {"worker", "--poll-interval", K::kDuration},
      {"worker", "--log-level", K::kString},
      {"worker", "--log-format", K::kString},
      {"worker", "--metrics-listen", K::kString},
      {"worker", "--health-listen", K::kString},
      {"worker", "--inventory-command", K::kString},
      {"worker", "--inventory-interval", K::kDuration},
      {"server", "--listen", K::kString},
      {"server", "--no-auth", K::kBool},
      {"server", "--allow-cmd-jobs", K::kBool},
      {"server", "--allow-host", K::kString},
      {"server", "--tls-cert", K::kString},
      {"server", "--tls-key", K::kString},
      {"server", "--drain-grace", K::kDuration},
      {"server", "--max-connections", K::kInteger},
      {"server", "--io-timeout", K::kDuration},
      {"server", "--log-format", K::kString},
      {"server", "--access-log", K::kBool},
      {"server", "--bulk-batch", K::kInteger},
      {"server", "--bulk-lease", K::kDuration},
      {"server", "--bulk-pause", K::kDuration},
      {"server", "--no-maintenance", K::kBool},
      {"server", "--maintenance-name", K::kString},
  };
  return keys;
}

const std::vector<std::string>& ConfigSections() {
  static const std::vector<std::string> sections = {"store", "worker", "tasks", "server"};
  return sections;
}

const ConfigKey* FindKey(std::string_view section, std::string_view name) {
  for (const ConfigKey& k : ConfigKeys()) {
    if (k.section == section && k.name() == name) return &k;
  }
  return nullptr;
}

std::vector<std::string> KeyNames(std::string_view section) {
  std::vector<std::string> out;
  for (const ConfigKey& k : ConfigKeys()) {
    if (k.section == section) out.push_back(k.name());
  }
  return out;
}

}  // namespace warden::cli::config
