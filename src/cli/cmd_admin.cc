// warden init | stats | sweep
#include <iostream>

#include "cli/cli.h"
#include "cli/render.h"
#include "cli/with_client.h"
#include "warden/db_url.h"

namespace warden::cli {

void AddInitCommand(CLI::App& app, Globals& g, Action* action) {
  CLI::App* cmd = app.add_subcommand("init", "create or migrate the database (idempotent)");
  cmd->callback([&g, action] {
    *action = WithClient(g, [&g](Client& c) -> Status {
      WARDEN_ASSIGN_OR_RETURN(int v, c.SchemaVersion());
      const std::string db = RedactDbUrl(g.db);
      if (g.json) {
        PrintJson({{"db", db}, {"schema_version", v}});
      } else {
        std::cout << "database " << db << " ready (schema version " << v << ")\n";
      }
      return Status::Ok();
    }, DbOpen::kCreateIfMissing);
  });
}

void AddAdminCommands(CLI::App& app, Globals& g, Action* action) {
  CLI::App* stats = app.add_subcommand("stats", "jobs and workers by state");
  stats->callback([&g, action] {
    *action = WithClient(g, [&g](Client& c) -> Status {
      WARDEN_ASSIGN_OR_RETURN(Stats s, c.GetStats());
      WARDEN_ASSIGN_OR_RETURN(auto unserved, c.Unserved());
      if (g.json) {
        Json out = StatsToJson(s);
        out["unserved"] = UnservedToJson(unserved);
        PrintJson(out);
      } else {
        PrintStats(s, unserved, NowMs());
      }
      return Status::Ok();
    });
  });

  auto keepalive = std::make_shared<std::string>("10s");
  auto watch = std::make_shared<std::string>("0s");
  CLI::App* sweep = app.add_subcommand("sweep", "run a maintenance pass now");
  sweep->add_option("--keepalive-threshold", *keepalive,
                    "presume silent workers dead after (default and minimum 10s)");
  sweep->add_option("--watch", *watch,
                    "keep sweeping this long, to find workers and leases that stay silent "
                    "(default 0s: one pass, which finds none)");
  sweep->callback([=, &g] {
    *action = WithClient(g, [=, &g](Client& c) -> Status {
      WARDEN_ASSIGN_OR_RETURN(Millis k, Duration("--keepalive-threshold", *keepalive));
      WARDEN_ASSIGN_OR_RETURN(Millis w, Duration("--watch", *watch));
      WARDEN_ASSIGN_OR_RETURN(SweepSummary r, c.Sweep(k, w));
      if (g.json) {
        PrintJson({{"proven_dead", r.proven_dead},
                   {"presumed_dead", r.presumed_dead},
                   {"rescued", r.rescued},
                   {"expired", r.expired},
                   {"promoted", r.promoted}});
      } else {
        std::cout << "workers: " << r.proven_dead << " proven dead, " << r.presumed_dead
                  << " presumed dead; jobs: " << r.rescued << " recovered, " << r.expired
                  << " expired, " << r.promoted << " promoted\n";
      }
      return Status::Ok();
    });
  });
}

}  // namespace warden::cli
