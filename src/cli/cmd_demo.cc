// `warden demo`: the flags, and the crash-recovery demonstration
// (demo/demo.h) run with this command's error and --json conventions.
#include <memory>
#include <string>

#include "cli/cli.h"
#include "cli/log_out.h"
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
  // It runs for tens of seconds in CI jobs and smoke tests whose logs a
  // pipeline reads, as the worker's and serve's do.
  auto log_format = std::make_shared<std::string>("text");
  cmd->add_option("--log-format", *log_format,
                  "text | json: the story as JSON objects on stderr, one a line (time, level, "
                  "message)")
      ->capture_default_str();
  cmd->callback([f, log_format, &g, action] {
    *action = [f, log_format, &g] {
      if (Status s = UseLogFormat(*log_format, {{"component", "demo"}}); !s.ok()) return Fail(s);
      // Only a PostgreSQL URL is used: a SQLite --db (or the default
      // ./warden.db) is never touched; the demo makes a fresh file. Read
      // when the command runs, once WARDEN_DB and warden.toml applied.
      const bool pg =
          g.db.rfind("postgres://", 0) == 0 || g.db.rfind("postgresql://", 0) == 0;
      demo::Options options = *f;
      options.json = g.json;
      options.pg_url = pg ? g.db : "";
      demo::Host host{Fail, PrintJson, nullptr};
      if (CurrentLogFormat() == LogFormat::kJson) {
        host.log = [](LogLevel level, const std::string& line) { LogOut(level, line); };
      }
      return demo::Run(options, host);
    };
  });
}

}  // namespace warden::cli
