#include <cstdlib>
#include <iostream>

#include "cli/cli.h"
#include "core/json_text.h"

#ifndef WARDEN_VERSION
#define WARDEN_VERSION "dev"
#endif

namespace warden::cli {

int Fail(const Status& s) {
  std::cerr << "warden: " << s.ToString() << "\n";
  return s.code() == StatusCode::kInvalidArgument ? 2 : 1;
}

Result<std::unique_ptr<Client>> OpenClient(const Globals& g, DbOpen how) {
  return how == DbOpen::kExisting ? Client::OpenExisting(g.db) : Client::Open(g.db);
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
  app.set_version_flag("--version", WARDEN_VERSION);
  app.require_subcommand(1);
  app.fallthrough();  // --db and --json may follow the subcommand
  Globals g;
  if (const char* env = std::getenv("WARDEN_DB"); env && *env) g.db = env;
  app.add_option("--db", g.db,
                 "database: a path, sqlite:PATH, or postgresql://USER@HOST:PORT/DB (env WARDEN_DB; "
                 "default ./warden.db)")
      ->envname("WARDEN_DB");
  app.add_flag("--json", g.json, "print one machine-readable JSON document on stdout");

  Action action;
  AddInitCommand(app, g, &action);
  AddAddCommand(app, g, &action);
  AddWorkerCommand(app, g, &action);
  AddJobsCommand(app, g, &action);
  AddWorkersCommand(app, g, &action);
  AddAdminCommands(app, g, &action);
  AddDemoCommand(app, g, &action);

  // Name an unknown command plainly (CLI11 would only say one is required).
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--db") {
      ++i;
      continue;
    }
    if (arg.empty() || arg[0] == '-') continue;
    const auto subs = app.get_subcommands([&](const CLI::App* c) { return c->get_name() == arg; });
    if (subs.empty()) {
      std::cerr << "warden: usage: unknown command '" << warden::OneLine(arg, 40)
                << "' (see warden --help)\n";
      return 2;
    }
    break;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11's messages quote the arguments: keep them to one short line.
    std::cerr << "warden: usage: " << warden::OneLine(e.what(), 200) << " (see warden --help)\n";
    return 2;
  }
  if (!action) {
    std::cerr << "warden: usage: no command given (see warden --help)\n";
    return 2;
  }
  return action();
}
