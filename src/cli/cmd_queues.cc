// warden queues [pause|resume QUEUE]
#include <fmt/core.h>

#include <iostream>

#include "cli/cli.h"
#include "cli/render.h"
#include "cli/with_client.h"
#include "warden/plural.h"

namespace warden::cli {
namespace {

void PrintQueueTable(const std::vector<QueueInfo>& queues, TimeMs now) {
  if (queues.empty()) {
    std::cout << "no queues: no job has been enqueued and none is paused\n";
    return;
  }
  size_t width = 5;
  for (const QueueInfo& q : queues) width = std::max(width, std::min<size_t>(q.name.size(), 40));
  fmt::print("{:<{}}  {:>9}  {:>9}  {:>7}  {:>9}  {:>6}  {:>8}  {:>7}  {}\n", "QUEUE", width,
             "SCHEDULED", "AVAILABLE", "RUNNING", "RETRYABLE", "DEAD", "OLDEST", "WORKERS",
             "STATE");
  for (const QueueInfo& q : queues) {
    const std::string oldest =
        q.oldest_available_at ? HumanDuration(Millis(std::max<int64_t>(0, now - *q.oldest_available_at)))
                              : "-";
    fmt::print("{:<{}}  {:>9}  {:>9}  {:>7}  {:>9}  {:>6}  {:>8}  {:>7}  {}\n",
               OneLine(q.name, width), width, q.CountIn(JobState::kScheduled),
               q.CountIn(JobState::kAvailable), q.CountIn(JobState::kRunning),
               q.CountIn(JobState::kRetryable), q.CountIn(JobState::kDead), oldest,
               q.live_workers, q.paused ? "paused" : "running");
  }
}

}  // namespace

void AddQueuesCommand(CLI::App& app, Globals& g, Action* action) {
  CLI::App* queues = app.add_subcommand(
      "queues", "list queues: jobs by state, the oldest available job's wait, live workers");
  queues->callback([=, &g] {
    if (!queues->get_subcommands().empty()) return;
    *action = WithClient(g, [&g](Client& c) -> Status {
      WARDEN_ASSIGN_OR_RETURN(auto list, c.ListQueues());
      WARDEN_ASSIGN_OR_RETURN(TimeMs now, c.StoreNow());
      if (g.json) {
        Json out = Json::array();
        for (const auto& q : list) out.push_back(QueueToJson(q, now));
        PrintJson(out);
      } else {
        PrintQueueTable(list, now);
      }
      return Status::Ok();
    });
  });
  for (const bool pause : {true, false}) {
    auto name = std::make_shared<std::string>();
    CLI::App* sub = queues->add_subcommand(
        pause ? "pause" : "resume",
        pause ? "stop workers claiming from a queue (running jobs finish)"
              : "let workers claim from a paused queue again");
    sub->add_option("queue", *name, "queue name")->required();
    sub->callback([=, &g] {
      *action = WithClient(g, [=, &g](Client& c) -> Status {
        WARDEN_ASSIGN_OR_RETURN(bool changed,
                                pause ? c.PauseQueue(*name) : c.ResumeQueue(*name));
        if (g.json) {
          PrintJson({{"queue", *name}, {"paused", pause}, {"changed", changed}});
        } else if (changed) {
          std::cout << "queue " << *name << (pause ? " paused" : " resumed") << "\n";
        } else {
          std::cout << "queue " << *name << " was already " << (pause ? "paused" : "running")
                    << "\n";
        }
        return Status::Ok();
      });
    });
  }
}

}  // namespace warden::cli
