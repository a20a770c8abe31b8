// warden jobs [show | retry | cancel]
#include <algorithm>
#include <chrono>
#include <iostream>

#include "cli/cli.h"
#include "cli/jobs_filter.h"
#include "cli/render.h"
#include "cli/with_client.h"
#include "warden/text.h"

namespace warden::cli {


void AddJobsCommand(CLI::App& app, Globals& g, Action* action) {
  auto filter = std::make_shared<FilterOptions>();
  auto limit = std::make_shared<int>(100);
  auto cursor = std::make_shared<std::string>();
  auto id = std::make_shared<std::string>();
  auto wide = std::make_shared<bool>(false);
  CLI::App* jobs = app.add_subcommand("jobs", "list and manage jobs");
  AddFilterOptions(jobs, filter);
  jobs->add_option("--limit", *limit, "at most this many, newest first (default 100)")
      ->check(CLI::Range(1, 1'000'000));
  auto before = std::make_shared<int64_t>(0);
  jobs->add_option("--cursor", *cursor,
                   "the page after the one that printed this cursor (next: on stderr)");
  jobs->add_option("--before", *before,
                   "only jobs with ids below this (--json: the next page is --before the "
                   "last id shown)")
      ->check(CLI::Range(int64_t{1}, INT64_MAX));
  jobs->add_flag("--wide", *wide, "show names and last errors whole, however long");
  jobs->callback([=, &g] {
    if (!jobs->get_subcommands().empty()) return;
    JobFilter f;
    f.limit = *limit;
    Status parsed = filter->Read(&f);
    if (parsed.ok() && *before > 0 && !cursor->empty()) {
      parsed = InvalidArgument("--cursor and --before say the same thing: give one");
    }
    if (*before > 0) f.before_id = *before;
    if (parsed.ok() && !cursor->empty()) {
      auto before = ParseJobCursor(*cursor);
      if (before.has_value()) f.before_id = *before;
      else parsed = before.error().Annotate("--cursor");
    }
    if (!parsed.ok()) {
      // A usage error (exit 2) before the database is opened.
      *action = [error = parsed] { return Fail(error); };
      return;
    }
    *action = WithClient(g, [=, &g](Client& c) -> Status {
      int64_t total = 0;
      // One more than asked: whether there is a next page.
      JobFilter page = f;
      page.limit = f.limit + 1;
      // --json stays an array of the rows (scripts index it): the total is
      // for the text table's footer only.
      WARDEN_ASSIGN_OR_RETURN(auto list, c.ListJobs(page, g.json ? nullptr : &total));
      std::string next;
      if (static_cast<int>(list.size()) > f.limit) {
        list.pop_back();
        next = EncodeJobCursor(list.back().id);
      }
      if (g.json) {
        Json out = Json::array();
        for (const auto& j : list) out.push_back(JobToJson(j, false));
        PrintJson(out);
      } else {
        std::vector<WorkerInfo> live;
        if (std::any_of(list.begin(), list.end(),
                        [](const JobInfo& j) { return j.state == JobState::kRunning; })) {
          WARDEN_ASSIGN_OR_RETURN(live, c.ListWorkers(/*live_only=*/true));
        }
        PrintJobTable(list, total, NowMs(), *wide, live);
        // Jobs that wait because no active worker runs them, whichever
        // rows the filter showed: a note beside the table, on stderr.
        WARDEN_ASSIGN_OR_RETURN(auto unserved, c.Unserved());
        std::fflush(stdout);
        PrintUnserved(stderr, unserved, NowMs());
      }
      // --json: one document on stdout, nothing else (the next page: --before
      // the last id shown).
      if (!next.empty() && !g.json) std::cerr << "next: --cursor " << next << "\n";
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
        std::vector<WorkerInfo> live;
        if (job.state == JobState::kRunning) {
          WARDEN_ASSIGN_OR_RETURN(live, c.ListWorkers(/*live_only=*/true));
        }
        PrintJobDetail(job, NowMs(), live);
        const bool waiting = job.state == JobState::kAvailable ||
                             job.state == JobState::kScheduled ||
                             job.state == JobState::kRetryable;
        JobSpec like;
        like.queue = job.queue;
        like.task = job.task;
        like.command = job.command;
        if (waiting) {
          // The reasons that name a fix of the workers' side (its node
          // disabled, full, or only silent workers) say it; otherwise how
          // to start a worker that runs it.
          WARDEN_ASSIGN_OR_RETURN(auto reasons, c.WhyNotRunning(jid));
          const WhyReason* told = nullptr;
          for (const WhyReason& r : reasons) {
            if (r.code == "node_disabled" || r.code == "node_capacity_full" ||
                r.code == "only_silent_workers") {
              told = &r;
              break;
            }
          }
          if (told) {
            std::cout << "  waiting:   " << told->message << "\n";
          } else {
            WARDEN_ASSIGN_OR_RETURN(bool served, c.AnyWorkerRuns(like));
            if (!served) {
              std::cout << "  waiting:   no active worker runs it (" << WhoWouldRun(like)
                        << ")\n";
            }
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

  CLI::App* timeline = jobs->add_subcommand(
      "timeline", "a job's recovery timeline: each attempt's claim, how it ended, how a loss "
                  "was found, when it could run again, and the late writes fencing refused");
  timeline->add_option("id", *id, "job id")->required();
  timeline->callback([=, &g] {
    *action = WithJobId(g, id, [=, &g](Client& c, JobId jid) -> Status {
      WARDEN_ASSIGN_OR_RETURN(JobTimeline t, c.Timeline(jid));
      if (g.json) {
        PrintJson(TimelineToJson(t));
        return Status::Ok();
      }
      std::cout << "job " << jid << " (" << JobStateName(t.job.state) << "):\n";
      for (const TimelineEvent& e : t.events) {
        std::cout << "  " << FormatTime(e.at) << "  " << OneLine(e.text, 400) << "\n";
      }
      return Status::Ok();
    });
  });

  // retry, cancel and delete: one job by id, or every job a filter matches
  // (a bulk operation, warden/bulk.h).
  struct OneOrMany {
    std::shared_ptr<std::string> id = std::make_shared<std::string>();
    std::shared_ptr<FilterOptions> filter = std::make_shared<FilterOptions>();
    std::shared_ptr<bool> dry_run = std::make_shared<bool>(false);
    std::shared_ptr<bool> all = std::make_shared<bool>(false);
  };
  auto one_or_many = [&](const char* name, const char* help) {
    OneOrMany o;
    CLI::App* cmd = jobs->add_subcommand(name, help);
    cmd->add_option("id", *o.id, "job id (none: every job the filter matches)");
    AddFilterOptions(cmd, o.filter);
    cmd->add_flag("--dry-run", *o.dry_run, "only count the jobs a filter would change");
    cmd->add_flag("--all", *o.all, "with no filter: every job the action applies to");
    return std::make_pair(cmd, o);
  };
  auto usage_if_mixed = [](const OneOrMany& o) -> Status {
    if (!o.id->empty() && (o.filter->Any() || *o.dry_run || *o.all)) {
      return InvalidArgument("give a job id or a filter, not both");
    }
    return Status::Ok();
  };

  auto [retry, r] = one_or_many(
      "retry", "run a dead, cancelled or expired job again (or every one a filter matches)");
  auto fresh = std::make_shared<bool>(false);
  retry->add_flag("--fresh", *fresh,
                  "start over: drop the job's checkpoint (a plain retry keeps it)");
  retry->callback([=, &g, r = r] {
    if (Status s = usage_if_mixed(r); !s.ok()) {
      *action = [s] { return Fail(s); };
      return;
    }
    if (r.id->empty()) {
      *action = RunBulkCommand(g, BulkAction::kRetry, r.filter, *r.dry_run, *r.all,
                               RetryOptions{*fresh});
      return;
    }
    *action = WithJobId(g, r.id, [=, &g](Client& c, JobId jid) -> Status {
      WARDEN_RETURN_IF_ERROR(c.RetryJob(jid, RetryOptions{*fresh}));
      if (g.json) {
        PrintJson({{"id", jid}, {"state", "available"}, {"fresh", *fresh}});
      } else {
        std::cout << "job " << jid << " is available again"
                  << (*fresh ? ", without its checkpoint\n" : "\n");
      }
      return Status::Ok();
    });
  });

  // Not a retry: a job that has not failed runs before its time, its
  // attempts and budgets as they were.
  auto run_now_id = std::make_shared<std::string>();
  CLI::App* run_now = jobs->add_subcommand(
      "run-now",
      "run a scheduled job now, before its time (or a retryable one without waiting out its "
      "backoff)");
  run_now->add_option("id", *run_now_id, "job id")->required();
  run_now->callback([=, &g] {
    *action = WithJobId(g, run_now_id, [=, &g](Client& c, JobId jid) -> Status {
      WARDEN_RETURN_IF_ERROR(c.RunJobNow(jid));
      if (g.json)
        PrintJson({{"id", jid}, {"state", "available"}});
      else
        std::cout << "job " << jid << " is due now\n";
      return Status::Ok();
    });
  });

  auto [cancel, k] = one_or_many(
      "cancel", "cancel a job (a running one is stopped), or every one a filter matches");
  cancel->callback([=, &g, k = k] {
    if (Status s = usage_if_mixed(k); !s.ok()) {
      *action = [s] { return Fail(s); };
      return;
    }
    if (k.id->empty()) {
      *action = RunBulkCommand(g, BulkAction::kCancel, k.filter, *k.dry_run, *k.all);
      return;
    }
    *action = WithJobId(g, k.id, [=, &g](Client& c, JobId jid) -> Status {
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

  auto [del, d] = one_or_many(
      "delete",
      "delete a finished job and its attempts (or every finished one a filter matches)");
  del->callback([=, &g, d = d] {
    if (Status s = usage_if_mixed(d); !s.ok()) {
      *action = [s] { return Fail(s); };
      return;
    }
    if (d.id->empty()) {
      *action = RunBulkCommand(g, BulkAction::kDelete, d.filter, *d.dry_run, *d.all);
      return;
    }
    *action = WithJobId(g, d.id, [=, &g](Client& c, JobId jid) -> Status {
      WARDEN_RETURN_IF_ERROR(c.DeleteJob(jid));
      if (g.json) PrintJson({{"id", jid}, {"deleted", true}});
      else std::cout << "job " << jid << " deleted\n";
      return Status::Ok();
    });
  });

  AddBulkCommands(jobs, g, action);
}

}  // namespace warden::cli
