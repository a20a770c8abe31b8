// warden queues [pause|resume QUEUE], warden queues limit QUEUE ...
#include <fmt/core.h>

#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "cli/render.h"
#include "cli/with_client.h"
#include "warden/plural.h"
#include "warden/text.h"

namespace warden::cli {
namespace {

void PrintQueueTable(const std::vector<QueueInfo>& queues, TimeMs now) {
  if (queues.empty()) {
    std::cout << "no queues: no job has been enqueued and none is paused\n";
    return;
  }
  size_t width = 5;
  for (const QueueInfo& q : queues) width = std::max(width, std::min<size_t>(q.name.size(), 40));
  fmt::print("{:<{}}  {:>9}  {:>9}  {:>7}  {:>9}  {:>6}  {:>8}  {:>7}  {:<7}  {}\n", "QUEUE",
             width, "SCHEDULED", "AVAILABLE", "RUNNING", "RETRYABLE", "DEAD", "OLDEST", "WORKERS",
             "STATE", "LIMITS");
  for (const QueueInfo& q : queues) {
    const std::string oldest =
        q.oldest_available_at
            ? HumanDuration(Millis(std::max<int64_t>(0, now - *q.oldest_available_at)))
            : "-";
    fmt::print("{:<{}}  {:>9}  {:>9}  {:>7}  {:>9}  {:>6}  {:>8}  {:>7}  {:<7}  {}\n",
               OneLine(q.name, width), width, q.CountIn(JobState::kScheduled),
               q.CountIn(JobState::kAvailable), q.CountIn(JobState::kRunning),
               q.CountIn(JobState::kRetryable), q.CountIn(JobState::kDead), oldest,
               q.live_workers, q.paused ? "paused" : "running",
               q.limits.empty() ? "-" : DescribeLimits(q.limits));
  }
}

struct LimitFlags {
  std::string queue;
  std::string concurrency;  // text: parsed by ParseConcurrencyLimit
  std::string rate;
  bool clear = false;
};

// The limits `f` asks for; a usage error (before the database is opened)
// when they are malformed or say nothing.
Result<QueueLimits> LimitsOf(const LimitFlags& f, bool concurrency_given, bool rate_given) {
  if (f.clear && (concurrency_given || rate_given)) {
    return InvalidArgument("--clear removes every limit: give it alone");
  }
  if (!f.clear && !concurrency_given && !rate_given) {
    return InvalidArgument("give --concurrency N, --rate N/INTERVAL (or both), or --clear");
  }
  QueueLimits limits;
  if (concurrency_given) {
    auto n = ParseConcurrencyLimit(f.concurrency);
    if (!n.has_value()) return n.error().Annotate("--concurrency");
    limits.concurrency = *n;
  }
  if (rate_given) {
    auto r = ParseRate(f.rate);
    if (!r.has_value()) return r.error().Annotate("--rate");
    limits.rate = *r;
  }
  return limits;
}

void AddLimitCommand(CLI::App* queues, Globals& g, Action* action) {
  auto f = std::make_shared<LimitFlags>();
  CLI::App* sub = queues->add_subcommand(
      "limit",
      "set a queue's fleet-wide limits (exactly those given; the others are removed): at most "
      "N jobs running, at most N started per interval");
  sub->add_option("queue", f->queue, "queue name")->required();
  CLI::Option* concurrency = sub->add_option(
      "--concurrency", f->concurrency,
      "at most N of its jobs running at once across all workers (claimed ahead included)");
  CLI::Option* rate = sub->add_option(
      "--rate", f->rate,
      "at most N of its jobs started in any window of INTERVAL: 10/1s, 100/m, 5000/1h");
  sub->add_flag("--clear", f->clear, "remove its limits");
  sub->callback([=, &g] {
    auto limits = LimitsOf(*f, concurrency->count() > 0, rate->count() > 0);
    if (!limits.has_value()) {
      *action = [s = limits.error()] { return Fail(s); };
      return;
    }
    *action = WithClient(g, [=, &g, wanted = *limits](Client& c) -> Status {
      const QueueLimits& limits = wanted;
      WARDEN_ASSIGN_OR_RETURN(bool changed, c.SetQueueLimits(f->queue, limits));
      if (g.json) {
        PrintJson({{"queue", f->queue}, {"limits", LimitsToJson(limits)}, {"changed", changed}});
      } else if (!changed) {
        std::cout << "queue " << f->queue << ": limits unchanged (" << DescribeLimits(limits)
                  << ")\n";
      } else if (limits.empty()) {
        std::cout << "queue " << f->queue << ": limits removed\n";
      } else {
        std::cout << "queue " << f->queue << " limited: " << DescribeLimits(limits) << "\n";
      }
      return Status::Ok();
    }, DbOpen::kCreateIfMissing);  // setting up, as `tokens create`
  });
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
  AddLimitCommand(queues, g, action);
  for (const bool pause : {true, false}) {
    auto name = std::make_shared<std::string>();
    auto create = std::make_shared<bool>(false);
    CLI::App* sub = queues->add_subcommand(
        pause ? "pause" : "resume",
        pause ? "stop workers claiming from a queue (running jobs finish)"
              : "let workers claim from a paused queue again");
    sub->add_option("queue", *name, "queue name")->required();
    if (pause) {
      sub->add_flag("--create", *create,
                    "pause a queue no job, limit or worker names yet (before a deploy); "
                    "without it, such a name is refused as a typo");
    }
    sub->callback([=, &g] {
      *action = WithClient(g, [=, &g](Client& c) -> Status {
        auto done = pause ? c.PauseQueue(*name, *create) : c.ResumeQueue(*name);
        if (!done.has_value() && done.error().code() == StatusCode::kNotFound) {
          return Status(StatusCode::kNotFound,
                        done.error().message() +
                            "; to pause it before its first job: warden queues pause --create " +
                            OneLine(*name, 60));
        }
        WARDEN_ASSIGN_OR_RETURN(bool changed, std::move(done));
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
