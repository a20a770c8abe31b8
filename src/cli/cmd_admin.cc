// warden init | jobs ... | workers ... | stats | sweep | wait
#include <charconv>
#include <iostream>
#include <thread>

#include "cli/cli.h"
#include "cli/render.h"
#include "core/duration.h"
#include "core/json_text.h"
#include "warden/db_url.h"

namespace warden::cli {
namespace {

// Runs `body` with an open client; maps its Status to the exit code.
template <typename Body>
Action WithClient(Globals& g, Body body, DbOpen how = DbOpen::kExisting) {
  return [&g, body, how] {
    auto client = OpenClient(g, how);
    if (!client.has_value()) return Fail(client.error());
    Status s = body(**client);
    return s.ok() ? 0 : Fail(s);
  };
}

Result<JobId> ParseId(const std::string& text) {
  JobId id = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || ptr != text.data() + text.size() || id <= 0) {
    return InvalidArgument("'" + OneLine(text, 40) + "' is not a job id");
  }
  return id;
}

// WithClient for a command on one job: a bad id is a usage error (exit 2)
// before the database is opened.
template <typename Body>
Action WithJobId(Globals& g, const std::shared_ptr<std::string>& id, Body body) {
  return [&g, id, body] {
    auto jid = ParseId(*id);
    if (!jid.has_value()) return Fail(jid.error());
    return WithClient(g, [&](Client& c) { return body(c, *jid); })();
  };
}

}  // namespace

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

void AddJobsCommand(CLI::App& app, Globals& g, Action* action) {
  auto state = std::make_shared<std::string>();
  auto queue = std::make_shared<std::string>();
  auto limit = std::make_shared<int>(100);
  auto id = std::make_shared<std::string>();
  auto wide = std::make_shared<bool>(false);
  CLI::App* jobs = app.add_subcommand("jobs", "list and manage jobs");
  jobs->add_option("--state", *state, "only jobs in this state");
  jobs->add_option("--queue", *queue, "only jobs on this queue");
  jobs->add_option("--limit", *limit, "at most this many, newest first (default 100)")
      ->check(CLI::Range(1, 1'000'000));
  jobs->add_flag("--wide", *wide, "show task and queue names whole, however long");
  jobs->callback([=, &g] {
    if (!jobs->get_subcommands().empty()) return;
    JobFilter f;
    f.queue = *queue;
    f.limit = *limit;
    if (!state->empty()) {
      f.state = ParseJobState(*state);
      if (!f.state) {
        // A usage error (exit 2) before the database is opened.
        *action = [state] {
          return Fail(InvalidArgument("unknown state '" + OneLine(*state, 40) +
                                      "' (scheduled, available, running, succeeded, retryable, "
                                      "dead, cancelled, expired)"));
        };
        return;
      }
    }
    *action = WithClient(g, [=, &g](Client& c) -> Status {
      WARDEN_ASSIGN_OR_RETURN(auto list, c.ListJobs(f));
      if (g.json) {
        Json out = Json::array();
        for (const auto& j : list) out.push_back(JobToJson(j, false));
        PrintJson(out);
      } else {
        PrintJobTable(list, *wide);
      }
      return Status::Ok();
    });
  });

  CLI::App* show = jobs->add_subcommand("show", "one job with every attempt");
  show->add_option("id", *id, "job id")->required();
  show->callback([=, &g] {
    *action = WithJobId(g, id, [=, &g](Client& c, JobId jid) -> Status {
      WARDEN_ASSIGN_OR_RETURN(JobInfo job, c.GetJob(jid));
      if (g.json) {
        PrintJson(JobToJson(job, true));
      } else {
        PrintJobDetail(job);
      }
      return Status::Ok();
    });
  });

  CLI::App* retry = jobs->add_subcommand("retry", "run a dead, cancelled or expired job again");
  retry->add_option("id", *id, "job id")->required();
  retry->callback([=, &g] {
    *action = WithJobId(g, id, [=, &g](Client& c, JobId jid) -> Status {
      WARDEN_RETURN_IF_ERROR(c.RetryJob(jid));
      if (g.json) PrintJson({{"id", jid}, {"state", "available"}});
      else std::cout << "job " << jid << " is available again\n";
      return Status::Ok();
    });
  });

  CLI::App* cancel = jobs->add_subcommand("cancel", "cancel a job (a running one is stopped)");
  cancel->add_option("id", *id, "job id")->required();
  cancel->callback([=, &g] {
    *action = WithJobId(g, id, [=, &g](Client& c, JobId jid) -> Status {
      WARDEN_ASSIGN_OR_RETURN(JobState s, c.CancelJob(jid));
      const bool running = s == JobState::kRunning;
      if (g.json) {
        PrintJson({{"id", jid}, {"state", running ? "cancelling" : "cancelled"}});
      } else {
        std::cout << "job " << jid
                  << (running ? ": its worker was asked to stop it\n" : " cancelled\n");
      }
      return Status::Ok();
    });
  });
}

void AddWorkersCommand(CLI::App& app, Globals& g, Action* action) {
  auto target = std::make_shared<std::string>();
  auto wide = std::make_shared<bool>(false);
  CLI::App* workers = app.add_subcommand("workers", "list workers, live and past");
  workers->add_flag("--wide", *wide, "show worker and node names whole, however long");
  workers->callback([=, &g] {
    if (!workers->get_subcommands().empty()) return;
    *action = WithClient(g, [=, &g](Client& c) -> Status {
      WARDEN_ASSIGN_OR_RETURN(auto list, c.ListWorkers());
      if (g.json) {
        Json out = Json::array();
        for (const auto& w : list) out.push_back(WorkerToJson(w));
        PrintJson(out);
      } else {
        PrintWorkerTable(list, *wide);
      }
      return Status::Ok();
    });
  });
  auto force = std::make_shared<bool>(false);
  CLI::App* release = workers->add_subcommand(
      "release", "declare a worker dead now and recover its jobs (its host is gone)");
  release->add_option("worker", *target, "worker name or id")->required();
  release->add_flag("--force", *force,
                    "release it even if its process is running on this host");
  release->callback([=, &g] {
    *action = WithClient(g, [=, &g](Client& c) -> Status {
      WARDEN_ASSIGN_OR_RETURN(int n, c.ReleaseWorker(*target, *force));
      if (g.json) PrintJson({{"worker", *target}, {"recovered", n}});
      else std::cout << "worker " << *target << " declared dead; " << n << " jobs recovered\n";
      return Status::Ok();
    });
  });
}

void AddAdminCommands(CLI::App& app, Globals& g, Action* action) {
  CLI::App* stats = app.add_subcommand("stats", "jobs and workers by state");
  stats->callback([&g, action] {
    *action = WithClient(g, [&g](Client& c) -> Status {
      WARDEN_ASSIGN_OR_RETURN(Stats s, c.GetStats());
      if (g.json) PrintJson(StatsToJson(s));
      else PrintStats(s);
      return Status::Ok();
    });
  });

  auto keepalive = std::make_shared<std::string>("10s");
  CLI::App* sweep = app.add_subcommand("sweep", "run one maintenance pass now");
  sweep->add_option("--keepalive-threshold", *keepalive,
                    "presume silent workers dead after (default and minimum 10s)");
  sweep->callback([=, &g] {
    *action = WithClient(g, [=, &g](Client& c) -> Status {
      WARDEN_ASSIGN_OR_RETURN(Millis k, Duration("--keepalive-threshold", *keepalive));
      WARDEN_ASSIGN_OR_RETURN(SweepSummary r, c.Sweep(k));
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

  auto timeout = std::make_shared<std::string>();
  CLI::App* wait = app.add_subcommand(
      "wait", "block until no job is scheduled, available, retryable or running");
  wait->add_option("--timeout", *timeout, "give up after this long (exit 1)");
  wait->callback([=, &g] {
    *action = [=, &g] {
      Millis limit = Millis::max();
      if (!timeout->empty()) {
        auto d = Duration("--timeout", *timeout);
        if (!d.has_value()) return Fail(d.error());
        limit = *d;
      }
      auto client = OpenClient(g, DbOpen::kExisting);
      if (!client.has_value()) return Fail(client.error());
      const auto deadline = limit == Millis::max()
                                ? std::chrono::steady_clock::time_point::max()
                                : std::chrono::steady_clock::now() + limit;
      while (true) {
        auto n = (*client)->CountUnfinished();
        if (!n.has_value() && !n.error().transient()) return Fail(n.error());
        if (n.has_value() && *n == 0) {
          if (g.json) PrintJson({{"unfinished", 0}});
          return 0;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
          return Fail(DeadlineExceeded(
              (n.has_value() ? std::to_string(*n) : std::string("some")) +
              " jobs still unfinished after " + *timeout));
        }
        std::this_thread::sleep_for(Millis(100));
      }
    };
  });
}

}  // namespace warden::cli
