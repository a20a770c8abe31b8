// `warden demo`: the flags, and the crash-recovery demonstration
// (demo/demo.h) run with this command's error and --json conventions.
#include <memory>
#include <string>

#include "cli/cli.h"
#include "demo/demo.h"

namespace warden::cli {

void AddDemoCommand(CLI::App& app, Globals& g, Action* action) {
  auto f = std::make_shared<demo::Options>();
  CLI::App* cmd = app.add_subcommand(
      "demo",
      "crash-recovery demonstration (SIGKILL, SIGSTOP) on a fresh SQLite file, or with "
      "--db postgresql://... on a queue of its own in that database");
  cmd->add_option("--jobs", f->jobs, "how many jobs (default 300)")->check(CLI::Range(20, 100000));
  cmd->add_flag("--keep", f->keep, "keep the temporary directory");
  cmd->callback([f, &g, action] {
    *action = [f, &g] {
      // Only a PostgreSQL URL is used: a SQLite --db (or the default
      // ./warden.db) is never touched; the demo makes a fresh file. Read
      // when the command runs, once WARDEN_DB and warden.toml applied.
      const bool pg =
          g.db.rfind("postgres://", 0) == 0 || g.db.rfind("postgresql://", 0) == 0;
      demo::Options options = *f;
      options.json = g.json;
      options.pg_url = pg ? g.db : "";
      return demo::Run(options, demo::Host{Fail, PrintJson});
    };
  });
}

}  // namespace warden::cli
