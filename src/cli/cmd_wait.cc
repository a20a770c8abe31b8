// warden wait: block until the queue drains, or (wait ID) one job finishes.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <thread>

#include "cli/cli.h"
#include "cli/log_out.h"
#include "cli/render.h"
#include "cli/wait_job.h"
#include "cli/with_client.h"
#include "warden/text.h"
#include "warden/plural.h"

namespace warden::cli {
namespace {

using SteadyTime = std::chrono::steady_clock::time_point;

SteadyTime DeadlineAfter(Millis limit) {
  return limit == Millis::max() ? SteadyTime::max() : std::chrono::steady_clock::now() + limit;
}

int WaitForQueue(Client& client, const Globals& g, Millis limit, const std::string& limit_text) {
  const SteadyTime deadline = DeadlineAfter(limit);
  while (true) {
    auto n = client.CountUnfinished();
    if (!n.has_value() && !n.error().transient()) return Fail(n.error());
    if (n.has_value() && *n == 0) {
      if (g.json) PrintJson({{"unfinished", 0}});
      return 0;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return Fail(DeadlineExceeded((n.has_value() ? Plural(*n, "job") : std::string("some jobs")) +
                                   " still unfinished after " + limit_text));
    }
    std::this_thread::sleep_for(Millis(100));
  }
}

// "error: exited with status 3": the latest attempt's error, if any.
std::string LastError(const JobInfo& job) {
  for (auto a = job.attempts.rbegin(); a != job.attempts.rend(); ++a) {
    if (a->error) {
      return std::string(ErrorKindName(a->error->kind)) + ": " + OneLine(a->error->message, 200);
    }
  }
  return "";  // none ran (cancelled or expired before a start): the state says it all
}

}  // namespace

int WaitForJob(Client& client, const Globals& g, JobId id, Millis limit,
               const std::string& limit_text) {
  const SteadyTime deadline = DeadlineAfter(limit);
  // Quick at first, for a job that takes milliseconds; then every 100 ms.
  Millis pause(5);
  std::string last_state = "unfinished";
  while (true) {
    auto job = client.GetJob(id);
    if (!job.has_value() && !job.error().transient()) return Fail(job.error());
    if (job.has_value()) {
      last_state = JobStateName(job->state);
      if (IsTerminal(job->state)) {
        const bool ok = job->state == JobState::kSucceeded;
        if (g.json) {
          PrintJson(JobToJson(*job, true));
        } else {
          std::cout << "job " << id << " " << last_state << "\n";
          if (ok && !job->result.is_null()) {
            std::cout << "result: " << job->result.dump(-1, ' ', false,
                                                          Json::error_handler_t::replace)
                      << "\n";
          }
          const std::string error = LastError(*job);
          if (!ok && !error.empty()) std::cout << "last error: " << error << "\n";
        }
        if (!ok) LogOut(LogLevel::kError, "job " + std::to_string(id) + " ended " + last_state, id);
        return ok ? 0 : 1;
      }
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return Fail(DeadlineExceeded("job " + std::to_string(id) + " still " + last_state +
                                   " after " + limit_text + " (it is left as it is)"));
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, Millis(100));
  }
}

void AddWaitCommand(CLI::App& app, Globals& g, Action* action) {
  auto timeout = std::make_shared<std::string>();
  auto id = std::make_shared<std::string>();
  auto log_format = std::make_shared<std::string>("text");
  CLI::App* wait = app.add_subcommand(
      "wait",
      "block until no job is scheduled, available, retryable or running; with an ID, until "
      "that job finishes (exit 0 if it succeeded)");
  wait->add_option("id", *id, "wait for this job only, and print its result");
  wait->add_option("--timeout", *timeout, "give up after this long (exit 1)");
  // A long wait runs in scripts and CI jobs whose logs a pipeline reads,
  // as the worker's and serve's do.
  wait->add_option("--log-format", *log_format,
                   "text | json: one JSON object a line on stderr (time, level, message, job)")
      ->capture_default_str();
  wait->callback([=, &g] {
    *action = [=, &g] {
      // The log's format first: an error about another flag is a line of it.
      if (Status s = UseLogFormat(*log_format, {{"component", "wait"}}); !s.ok()) return Fail(s);
      Millis limit = Millis::max();
      if (!timeout->empty()) {
        auto d = Duration("--timeout", *timeout);
        if (!d.has_value()) return Fail(d.error());
        limit = *d;
      }
      std::optional<JobId> jid;
      if (!id->empty()) {
        auto parsed = ParseId(*id);
        if (!parsed.has_value()) return Fail(parsed.error());
        jid = *parsed;
      }
      auto client = OpenClient(g, DbOpen::kExisting);
      if (!client.has_value()) return Fail(client.error());
      return jid ? WaitForJob(**client, g, *jid, limit, *timeout)
                 : WaitForQueue(**client, g, limit, *timeout);
    };
  });
}

}  // namespace warden::cli
