// warden config check [FILE]: reads warden.toml as the commands read it,
// checks every section as the command it configures would (worker, serve),
// and prints the settings in effect, each with where its value came from
// (docs/configuration.md). It opens no database and no port.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <sstream>

#include "cli/cli.h"
#include "cli/config/settings.h"
#include "cli/config/toml_text.h"
#include "cli/serve_flags.h"
#include "cli/worker_flags.h"
#include "warden/db_url.h"
#include "warden/duration.h"
#include "warden/lists.h"
#include "warden/text.h"

namespace warden::cli {
namespace {

using config::Applied;
using config::ConfigKey;
using config::Source;

// The node a worker without --node registers under: its host's name.
std::string HostName() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return host;
}

// A worker's and a server's settings by key name, from the options their
// command would run with (so a default is the real one).
Json WorkerValues(const WorkerOptions& o, const WorkerFlags& f) {
  return {{"queues", o.queues},
          {"node", o.node.empty() ? HostName() : o.node},
          {"concurrency", o.concurrency},
          {"allow_cmd", o.allow_commands},
          {"heartbeat", FormatDuration(o.heartbeat)},
          {"lease", FormatDuration(o.lease)},
          {"keepalive_threshold", FormatDuration(o.keepalive_threshold)},
          {"sweep_interval", FormatDuration(o.sweep_interval)},
          {"shutdown_timeout", FormatDuration(o.shutdown_timeout)},
          {"start_timeout", FormatDuration(o.start_timeout)},
          {"kill_grace", FormatDuration(o.kill_grace)},
          {"poll_interval", FormatDuration(o.poll_interval)},
          {"log_level", LogLevelName(o.log_level)},
          {"log_format", LogFormatName(o.log_format)},
          {"metrics_listen", f.metrics_listen},
          {"health_listen", f.health_listen},
          {"inventory_command", o.inventory_command},
          {"inventory_interval", FormatDuration(o.inventory_interval)}};
}

Json ServerValues(const ServeSetup& s) {
  const server::ServeOptions& o = s.options;
  return {{"listen", o.listen},
          {"no_auth", o.no_auth},
          {"allow_cmd_jobs", o.allow_command_jobs},
          {"allow_host", JoinList(o.allowed_hosts)},
          {"tls_cert", o.tls_cert},
          {"tls_key", o.tls_key},
          {"drain_grace", FormatDuration(o.drain_grace)},
          {"max_connections", o.max_connections},
          {"io_timeout", FormatDuration(o.io_timeout)},
          {"log_format", LogFormatName(s.log_format)},
          {"access_log", o.access_log},
          {"bulk_batch", o.bulk_batch},
          {"bulk_lease", FormatDuration(o.bulk_lease)},
          {"bulk_pause", FormatDuration(o.bulk_pause)},
          {"no_maintenance", !o.maintenance},
          {"maintenance_name", o.maintenance_name}};
}

// {"value": V, "source": "file", "line": 3} (or "env" with "env", "flag"
// with "flag", "default").
Json Entry(Json value, const Source& from) {
  Json e = {{"value", std::move(value)}};
  switch (from.kind) {
    case Source::Kind::kDefault:
      e["source"] = "default";
      break;
    case Source::Kind::kFlag:
      e["source"] = "flag";
      e["flag"] = from.name;
      break;
    case Source::Kind::kEnv:
      e["source"] = "env";
      e["env"] = from.name;
      break;
    case Source::Kind::kFile:
      e["source"] = "file";
      e["line"] = from.at.line;
      break;
  }
  return e;
}

// Each key of `section` with its value from `values` and its source.
Result<Json> Section(const config::Settings& settings, std::string_view section,
                     const Json& values) {
  Json out = Json::object();
  for (const ConfigKey& key : config::ConfigKeys()) {
    if (key.section != section) continue;
    const Applied* applied = settings.Find(key);
    if (!values.contains(key.name()) || applied == nullptr) {
      return Internal("config check shows no value for " + key.dotted());
    }
    out[key.name()] = Entry(values.at(key.name()), applied->source);
  }
  return out;
}

Json Tasks(const config::Settings& settings, const WorkerOptions& o) {
  Json out = Json::object();
  for (const Applied& a : settings.applied()) {
    if (a.key != nullptr || !o.task_commands.count(a.task)) continue;
    out[a.task] = Entry(o.task_commands.at(a.task), a.source);
  }
  return out;
}

// The TOML text of the document: each section, its keys aligned, and each
// value's source as a comment.
std::string Render(const Json& doc) {
  std::ostringstream out;
  out << "# warden config check: the settings in effect, each with where its value comes\n"
         "# from (flag, env VARIABLE, FILE:LINE or default); passwords are shown as ***\n";
  if (doc.at("file").is_null()) {
    out << "# file: none (" << config::kDefaultConfigPath
        << " does not exist; --config FILE or WARDEN_CONFIG names one)\n";
  } else {
    out << "# file: " << ValidUtf8(doc.at("file").get<std::string>()) << " (from "
        << doc.at("file_from").get<std::string>() << ")\n";
  }
  for (const std::string& section : config::ConfigSections()) {
    const Json& entries = doc.at("settings").at(section);
    out << "\n[" << section << "]\n";
    if (entries.empty()) out << "# none\n";
    // The keys in the order of docs/configuration.md; tasks by name.
    std::vector<std::string> names = config::KeyNames(section);
    if (section == "tasks") {
      for (const auto& [name, e] : entries.items()) names.push_back(name);
    }
    std::vector<std::pair<std::string, std::string>> lines;
    size_t width = 0;
    for (const std::string& name : names) {
      const Json& e = entries.at(name);
      lines.push_back({config::TomlKey(name) + " = " + config::TomlValue(e.at("value")), ""});
      const std::string from = e.at("source");
      if (from == "file") {
        lines.back().second = ValidUtf8(doc.at("file").get<std::string>()) + ":" +
                              std::to_string(e.at("line").get<int>());
      } else if (from == "env" || from == "flag") {
        lines.back().second = from + " " + e.at(from).get<std::string>();
      } else {
        lines.back().second = from;
      }
      width = std::max(width, std::min<size_t>(lines.back().first.size(), 44));
    }
    for (const auto& [line, from] : lines) {
      out << line << std::string(width + 2 - std::min(width, line.size()), ' ') << "# " << from
          << "\n";
    }
  }
  return out.str();
}

// A password in a file every user can read is worth a word.
void NoteReadablePassword(const config::Settings& settings, const std::string& db) {
  const config::Applied* a = settings.Find(*config::FindKey("store", "db"));
  if (a == nullptr || a->source.kind != Source::Kind::kFile || RedactDbUrl(db) == db) return;
  struct stat st {};
  if (stat(a->source.name.c_str(), &st) != 0 || (st.st_mode & S_IROTH) == 0) return;
  std::cerr << "warden: note: " << OneLine(a->source.name, 200)
            << " holds a database password and every user may read it: make it readable by "
               "warden's user alone (chmod o-r), or keep the password in ~/.pgpass or "
               "PGPASSWORD\n";
}

int RunCheck(CLI::App& app, const Globals& g, const std::optional<std::string>& file) {
  const config::EnvFn env = config::ProcessEnv();
  std::optional<config::ConfigLocation> location;
  if (file) {
    location = config::ConfigLocation{*file, "the argument"};
  } else {
    std::optional<std::string> named;
    if (app.get_option("--config")->count() > 0) named = g.config;
    location = config::LocateConfig(named, env, config::kDefaultConfigPath);
  }
  auto settings = config::Settings::Read(location);
  if (!settings.has_value()) return Fail(settings.error());
  if (Status s = settings->Apply(app, "store", env); !s.ok()) return Fail(s);

  // Each command's section through that command's own flags and checks.
  CLI::App scratch;
  WorkerFlags worker_flags;
  CLI::App* worker = scratch.add_subcommand("worker");
  AddWorkerFlags(worker, worker_flags);
  if (Status s = settings->Apply(*worker, "worker", env); !s.ok()) return Fail(s);
  auto worker_options = BuildWorkerOptions(worker_flags);
  if (!worker_options.has_value()) {
    return Fail(settings->Attribute(worker_options.error(), "worker"));
  }
  ServeFlags serve_flags;
  CLI::App* serve = scratch.add_subcommand("serve");
  AddServeFlags(serve, serve_flags);
  if (Status s = settings->Apply(*serve, "server", env); !s.ok()) return Fail(s);
  auto serve_setup = BuildServeSetup(serve_flags);
  if (!serve_setup.has_value()) return Fail(settings->Attribute(serve_setup.error(), "server"));

  Json doc = {{"file", location ? Json(location->path) : Json()},
              {"file_from", location ? Json(location->from) : Json()},
              {"settings", Json::object()}};
  Json& out = doc["settings"];
  const Json sections[] = {{{"db", RedactDbUrl(g.db)}}, WorkerValues(*worker_options, worker_flags),
                           ServerValues(*serve_setup)};
  const char* names[] = {"store", "worker", "server"};
  for (size_t i = 0; i < std::size(names); ++i) {
    auto section = Section(*settings, names[i], sections[i]);
    if (!section.has_value()) return Fail(section.error());
    out[names[i]] = std::move(*section);
  }
  out["tasks"] = Tasks(*settings, *worker_options);
  NoteReadablePassword(*settings, g.db);
  if (g.json) {
    PrintJson(doc);
  } else {
    std::cout << Render(doc);
  }
  return 0;
}

}  // namespace

void AddConfigCommand(CLI::App& app, Globals& g, Action* action) {
  CLI::App* config = app.add_subcommand(
      "config", "the configuration file, warden.toml (docs/configuration.md)");
  // Not require_subcommand: a mistyped `config chek` then gets CLI11's
  // "not expected" error, which main() completes with "did you mean".
  config->callback([config, action] {
    if (config->get_subcommands().empty()) {
      *action = [] { return FailUsage("warden config needs a command: check [FILE]"); };
    }
  });
  auto file = std::make_shared<std::string>();
  CLI::App* check = config->add_subcommand(
      "check",
      "check the configuration file (or FILE) as every command reads it, and print the "
      "settings in effect with where each comes from (passwords as ***)");
  CLI::Option* given = check->add_option(
      "FILE", *file,
      "the file to check (default: --config, else WARDEN_CONFIG, else "
      "/etc/warden/warden.toml when it exists)");
  check->callback([&app, &g, file, given, action] {
    *action = [&app, &g, file, given] {
      return RunCheck(app, g, given->count() > 0 ? std::optional(*file) : std::nullopt);
    };
  });
}

}  // namespace warden::cli
