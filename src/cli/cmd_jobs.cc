// warden jobs [show | retry | cancel]
#include <iostream>

#include "cli/cli.h"
#include "cli/render.h"
#include "cli/with_client.h"
#include "core/json_text.h"

namespace warden::cli {

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

}  // namespace warden::cli
