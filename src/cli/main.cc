#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string_view>

#include <pwd.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/config/settings.h"
#include "cli/did_you_mean.h"
#include "cli/log_out.h"
#include "warden/text.h"
#include "warden/db_url.h"

#ifndef WARDEN_VERSION
#define WARDEN_VERSION "dev"
#endif

namespace warden::cli {

// build_info.cc, written at build time (cmake/build_info.cmake).
extern const char kBuildCommit[];
extern const char kBuildType[];

namespace {

bool json_errors = false;
// Tells an error about a setting by where its value came from (warden.toml,
// WARDEN_*): the settings of the command being run, once applied.
std::optional<config::Settings> settings;

// {"error": {"code": "not_found", "message": "..."}}: the code is the
// Status code's name in snake case, which tells a script how to react
// (status.h); a usage error is "invalid_argument", as its exit status 2 says.
void PrintErrorDocument(StatusCode code, const std::string& message, const Json& more = Json()) {
  std::string name = StatusCodeName(code);
  std::replace(name.begin(), name.end(), ' ', '_');
  Json doc = more.is_object() ? more : Json::object();
  doc["error"] = {{"code", name}, {"message", message}};
  PrintJson(doc);
}

// Whether the raw arguments ask for --json: an argument that is exactly
// `--json`, anywhere but as the value of --db or --config.
bool WantsJson(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--json") return true;
    if (arg == "--db" || arg == "--config") ++i;  // its value
  }
  return false;
}

// The environment, then warden.toml, for every flag of the command being
// run that the command line did not give: [store] for every command,
// [worker] and [tasks] for `worker`, [server] for `serve`. `config check`
// reads the file itself (it may be given another).
Status ApplySettings(CLI::App& app, const Globals& g) {
  if (app.got_subcommand("config")) return Status::Ok();
  std::optional<std::string> named;
  if (app.get_option("--config")->count() > 0) named = g.config;
  const config::EnvFn env = config::ProcessEnv();
  auto file = config::LocateConfig(named, env, config::kDefaultConfigPath);
  WARDEN_ASSIGN_OR_RETURN(settings, config::Settings::Read(std::move(file)));
  WARDEN_RETURN_IF_ERROR(settings->Apply(app, "store", env));
  for (CLI::App* cmd : app.get_subcommands()) {
    if (cmd->get_name() == "worker") {
      WARDEN_RETURN_IF_ERROR(settings->Apply(*cmd, "worker", env));
    } else if (cmd->get_name() == "serve") {
      WARDEN_RETURN_IF_ERROR(settings->Apply(*cmd, "server", env));
    }
  }
  return Status::Ok();
}

}  // namespace

void SetJsonErrors(bool on) { json_errors = on; }

int Fail(const Status& s) { return FailWith(s, Json()); }

int FailWith(const Status& given, const Json& more) {
  const Status s = settings ? settings->Attribute(given) : given;
  // For a person, the message alone: the code's name ("data loss:" for a
  // file that is not a database) is for scripts, which read it from the
  // exit status and from --json's "code".
  if (CurrentLogFormat() == LogFormat::kJson) {
    LogOut(LogLevel::kError, s.message());
  } else {
    std::cerr << "warden: " << s.message() << "\n";
  }
  if (json_errors) PrintErrorDocument(s.code(), s.message(), more);
  return s.code() == StatusCode::kInvalidArgument ? 2 : 1;
}

int FailUsage(const std::string& message) {
  // It may quote the arguments, a database URL given in the wrong place
  // among them (`warden stats postgresql://u:pw@h/db`): redacted before it
  // is cut to one short line, and again here for any other caller.
  const std::string text = RedactDbUrlsIn(message) + " (see warden --help)";
  if (CurrentLogFormat() == LogFormat::kJson) {
    LogOut(LogLevel::kError, "usage: " + text);
  } else {
    std::cerr << "warden: usage: " << text << "\n";
  }
  if (json_errors) PrintErrorDocument(StatusCode::kInvalidArgument, text);
  return 2;
}

// Who runs this command, for the audit log: the login name, else the uid.
static std::string UserName() {
  if (const passwd* pw = getpwuid(geteuid()); pw && pw->pw_name) return pw->pw_name;
  return "uid " + std::to_string(geteuid());
}

Result<std::unique_ptr<Client>> OpenClient(const Globals& g, DbOpen how) {
  auto client = how == DbOpen::kExisting ? Client::OpenExisting(g.db) : Client::Open(g.db);
  if (client.has_value()) (*client)->SetActor("cli:" + UserName());
  return client;
}

// What it prints comes from outside (a database, a command's output): bytes
// that are not UTF-8 are shown as U+FFFD rather than throwing.
void PrintJson(const Json& j) {
  std::cout << j.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
}

}  // namespace warden::cli

int main(int argc, char** argv) {
  using namespace warden::cli;
  CLI::App app{"warden: a durable job queue that recovers the work of dead workers in "
               "under a second"};
  // "warden 0.1.0 (commit 5b50bd3, Release)": what a bug report needs.
  const std::string version = std::string("warden ") + WARDEN_VERSION + " (commit " +
                              kBuildCommit + ", " + kBuildType + ")";
  app.set_version_flag("--version", version);
  app.require_subcommand(1);
  app.fallthrough();  // --db and --json may follow the subcommand
  Globals g;
  // WARDEN_DB, and warden.toml's [store] db, apply after parsing
  // (ApplySettings), when the command line has not given --db.
  app.add_option("--db", g.db,
                 "database: a path, sqlite:PATH, or postgresql://USER@HOST:PORT/DB (env WARDEN_DB, "
                 "or [store] db in the configuration file; default ./warden.db)");
  app.add_option("--config", g.config,
                 "configuration file (env WARDEN_CONFIG; default /etc/warden/warden.toml when it "
                 "exists; /dev/null for none): docs/configuration.md");
  app.add_flag("--json", g.json, "print one machine-readable JSON document on stdout");

  Action action;
  AddInitCommand(app, g, &action);
  AddAddCommand(app, g, &action);
  AddWorkerCommand(app, g, &action);
  AddJobsCommand(app, g, &action);
  AddWorkersCommand(app, g, &action);
  AddAdminCommands(app, g, &action);
  AddWaitCommand(app, g, &action);
  AddDemoCommand(app, g, &action);
  AddQueuesCommand(app, g, &action);
  AddNodesCommand(app, g, &action);
  AddTokensCommand(app, g, &action);
  AddAuditCommand(app, g, &action);
  AddServeCommand(app, g, &action);
  AddConfigCommand(app, g, &action);

  SetJsonErrors(WantsJson(argc, argv));
  if (WantsJsonLogs(argc, argv)) SetLogFormat(warden::LogFormat::kJson);
  // Name an unknown command plainly (CLI11 would only say one is required).
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--db" || arg == "--config") {
      ++i;
      continue;
    }
    if (arg.empty() || arg[0] == '-') continue;
    const auto subs = app.get_subcommands([&](const CLI::App* c) { return c->get_name() == arg; });
    if (subs.empty()) {
      const std::string guess = warden::Closest(arg, SubcommandNames(app));
      return FailUsage("unknown command '" + warden::OneLine(warden::RedactDbUrlsIn(arg), 40) +
                       "'" + (guess.empty() ? "" : "; did you mean '" + guess + "'?"));
    }
    break;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion&) {
    std::cout << version << "\n";  // CLI11 would end it without a line break
    return 0;
  } catch (const CLI::ExtrasError& e) {
    // A mistyped flag or subcommand: name the one that was meant.
    return FailUsage(warden::OneLine(warden::RedactDbUrlsIn(e.what()), 200) +
                     SuggestForExtras(app));
  } catch (const CLI::ParseError& e) {
    // CLI11's messages quote the arguments: keep them to one short line.
    return FailUsage(warden::OneLine(warden::RedactDbUrlsIn(e.what()), 200));
  }
  SetJsonErrors(g.json);
  if (!action) return FailUsage("no command given");
  if (const warden::Status s = ApplySettings(app, g); !s.ok()) return Fail(s);
  return action();
}
