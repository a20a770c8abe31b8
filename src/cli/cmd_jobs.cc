// warden jobs [show | retry | cancel]
#include <chrono>
#include <iostream>

#include "cli/cli.h"
#include "cli/render.h"
#include "cli/with_client.h"
#include "warden/text.h"

namespace warden::cli {

namespace {

// The --state values (each may hold several, comma-separated), or the
// usage error that names the first unknown one and every valid name.
Result<std::vector<JobState>> ParseStates(const std::vector<std::string>& names) {
  std::vector<JobState> states;
  for (const std::string& name : names) {
    auto s = ParseJobState(name);
    if (!s) {
      return InvalidArgument("unknown state '" + OneLine(name, 40) +
                             "' (scheduled, available, running, succeeded, retryable, dead, "
                             "cancelled, expired)");
    }
    states.push_back(*s);
  }
  return states;
}

}  // namespace

void AddJobsCommand(CLI::App& app, Globals& g, Action* action) {
  auto states = std::make_shared<std::vector<std::string>>();
  auto queue = std::make_shared<std::string>();
  auto task = std::make_shared<std::string>();
  auto limit = std::make_shared<int>(100);
  auto id = std::make_shared<std::string>();
  auto wide = std::make_shared<bool>(false);
  CLI::App* jobs = app.add_subcommand("jobs", "list and manage jobs");
  jobs->add_option("--state", *states,
                   "only jobs in these states (--state dead,retryable, or --state repeated)")
      ->delimiter(',');
  jobs->add_option("--queue", *queue, "only jobs on this queue");
  jobs->add_option("--task", *task, "only jobs of this task");
  jobs->add_option("--limit", *limit, "at most this many, newest first (default 100)")
      ->check(CLI::Range(1, 1'000'000));
  jobs->add_flag("--wide", *wide, "show names and last errors whole, however long");
  jobs->callback([=, &g] {
    if (!jobs->get_subcommands().empty()) return;
    JobFilter f;
    f.queue = *queue;
    f.task = *task;
    f.limit = *limit;
    auto parsed = ParseStates(*states);
    if (!parsed.has_value()) {
      // A usage error (exit 2) before the database is opened.
      *action = [error = parsed.error()] { return Fail(error); };
      return;
    }
    f.states = *parsed;
    *action = WithClient(g, [=, &g](Client& c) -> Status {
      int64_t total = 0;
      // --json stays an array of the rows (scripts index it): the total is
      // for the text table's footer only.
      WARDEN_ASSIGN_OR_RETURN(auto list, c.ListJobs(f, g.json ? nullptr : &total));
      if (g.json) {
        Json out = Json::array();
        for (const auto& j : list) out.push_back(JobToJson(j, false));
        PrintJson(out);
      } else {
        PrintJobTable(list, total, NowMs(), *wide);
        // Jobs that wait because no active worker runs them, whichever
        // rows the filter showed: a note beside the table, on stderr.
        WARDEN_ASSIGN_OR_RETURN(auto unserved, c.Unserved());
        std::fflush(stdout);
        PrintUnserved(stderr, unserved, NowMs());
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
        PrintJobDetail(job, NowMs());
        const bool waiting = job.state == JobState::kAvailable ||
                             job.state == JobState::kScheduled ||
                             job.state == JobState::kRetryable;
        JobSpec like;
        like.queue = job.queue;
        like.task = job.task;
        like.command = job.command;
        if (waiting) {
          WARDEN_ASSIGN_OR_RETURN(bool served, c.AnyWorkerRuns(like));
          if (!served) {
            std::cout << "  waiting:   no active worker runs it (" << WhoWouldRun(like) << ")\n";
          }
        }
      }
      return Status::Ok();
    });
  });

  CLI::App* why = jobs->add_subcommand(
      "why", "why a job is not running: every reason that holds, with its evidence");
  why->add_option("id", *id, "job id")->required();
  why->callback([=, &g] {
    *action = WithJobId(g, id, [=, &g](Client& c, JobId jid) -> Status {
      WARDEN_ASSIGN_OR_RETURN(JobInfo job, c.GetJob(jid));
      WARDEN_ASSIGN_OR_RETURN(auto reasons, c.WhyNotRunning(jid));
      if (g.json) {
        PrintJson(WhyToJson(job, reasons));
      } else {
        std::cout << "job " << jid << " (" << JobStateName(job.state) << "):\n";
        for (const WhyReason& r : reasons) std::cout << "  " << r.code << ": " << r.message << "\n";
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

}  // namespace warden::cli
