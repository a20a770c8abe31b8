// The in-memory store against SQLite, the store it copies: the same random
// operations on both, every answer and then the whole database compared.
// The conformance suite says what a store must do; this finds where the
// copy does anything else (an order, a column left as it was, a count).
//
// Backoff jitter is each store's own randomness, so no job here may retry
// with a delay. A job with retry `none` ends at its first charged failure;
// one that retries (at most two crashes) fails only by being lost, released
// or cancelled: a first loss is retried at once, a second ends it as a
// crash loop. What comes back uncharged (released, lost before an
// at-most-once start, an operator's retry) comes back at once.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>

#include "store/store.h"

namespace warden::testing {
namespace {

Json Opt(const std::optional<int64_t>& v) { return v ? Json(*v) : Json(); }

Json StatusJson(const Status& s) {
  return {{"code", static_cast<int>(s.code())}, {"message", s.message()}};
}

Json AttemptJson(const AttemptInfo& a) {
  Json j = {{"attempt", a.attempt},       {"worker", a.worker},
            {"worker_name", a.worker_name}, {"lease_token", a.lease_token},
            {"claimed_at", a.claimed_at},   {"started_at", Opt(a.started_at)},
            {"finished_at", Opt(a.finished_at)}, {"outcome", a.outcome},
            {"note", a.note}};
  if (a.error) {
    j["error"] = {{"kind", ErrorKindName(a.error->kind)},
                  {"message", a.error->message},
                  {"exit_code", Opt(a.error->exit_code)},
                  {"signal", Opt(a.error->signal)},
                  {"stderr_tail", a.error->stderr_tail},
                  {"stdout_tail", a.error->stdout_tail}};
  }
  return j;
}

Json JobJson(const JobInfo& j) {
  Json out = {{"id", j.id},
              {"queue", j.queue},
              {"task", j.task},
              {"command", j.command},
              {"payload", j.payload},
              {"priority", j.priority},
              {"state", JobStateName(j.state)},
              {"attempt", j.attempt},
              {"charged", j.charged},
              {"crashes", j.crashes},
              {"max_attempts", j.max_attempts},
              {"max_crashes", j.max_crashes},
              {"retry", RetryPolicyName(j.retry)},
              {"delivery", DeliveryName(j.delivery)},
              {"timeout", j.timeout.count()},
              {"lease", j.lease ? Json(j.lease->count()) : Json()},
              {"unique_key", j.unique_key},
              {"concurrency_key", j.concurrency_key},
              {"worker", Opt(j.worker)},
              {"worker_name", j.worker_name},
              {"lease_token", j.lease_token},
              {"lease_expires_at", Opt(j.lease_expires_at)},
              {"run_at", j.run_at},
              {"start_deadline_at", Opt(j.start_deadline_at)},
              {"created_at", j.created_at},
              {"started_at", Opt(j.started_at)},
              {"finished_at", Opt(j.finished_at)},
              {"checkpoint", j.checkpoint},
              {"result", j.result},
              {"last_error", j.last_error ? Json(ErrorKindName(*j.last_error)) : Json()},
              {"last_error_message", j.last_error_message},
              {"attempts", Json::array()}};
  for (const AttemptInfo& a : j.attempts) out["attempts"].push_back(AttemptJson(a));
  return out;
}

Json WorkerJson(const WorkerInfo& w) {
  return {{"id", w.id},
          {"name", w.name},
          {"node", w.node},
          {"pid", w.pid},
          {"version", w.version},
          {"queues", w.queues},
          {"tasks", w.tasks},
          {"concurrency", w.concurrency},
          {"state", WorkerStateName(w.state)},
          {"started_at", w.started_at},
          {"last_heartbeat", w.last_heartbeat},
          {"stopped_at", Opt(w.stopped_at)},
          {"death_reason", w.death_reason},
          {"running", w.running},
          {"allow_commands", w.allow_commands},
          {"keepalive_ms", w.keepalive.count()}};
}

Json LeaseJson(const LeaseRow& l) {
  return {{"id", l.ref.id},         {"token", l.ref.lease_token},
          {"worker", l.worker},     {"expires_at", l.expires_at},
          {"length", l.length.count()}, {"heartbeat", Opt(l.worker_heartbeat)}};
}

template <typename T, typename F>
Json Each(const std::vector<T>& items, F f) {
  Json out = Json::array();
  for (const T& item : items) out.push_back(f(item));
  return out;
}

template <typename T, typename F>
Json Answer(const Result<T>& r, F f) {
  return r.has_value() ? Json{{"ok", f(*r)}} : Json{{"error", StatusJson(r.error())}};
}

// Everything a store shows of its database.
Json Everything(Store& s) {
  Json all;
  JobFilter every;
  every.limit = 1'000'000;
  auto jobs = s.JobList(every, nullptr);
  all["list"] = Answer(jobs, [](const auto& v) { return Each(v, JobJson); });
  if (jobs.has_value()) {
    for (const JobInfo& j : *jobs) {
      all["get"].push_back(Answer(s.JobGet(j.id), JobJson));
    }
  }
  all["workers"] = Answer(s.WorkerList(false), [](const auto& v) { return Each(v, WorkerJson); });
  // In no order (SQLite's follows its plan: by name), so sorted here.
  all["live"] = Answer(s.WorkerListLive(""), [](std::vector<WorkerLiveness> v) {
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    return Each(v, [](const WorkerLiveness& w) {
      return Json{w.id, w.name, w.host, w.boot_id, w.pid_ns, w.pid, w.pid_start, w.last_heartbeat};
    });
  });
  all["leases"] = Answer(s.JobLeases(), [](const auto& v) { return Each(v, LeaseJson); });
  all["stats"] = Answer(s.GetStats(), [](const Stats& st) {
    return Json{{"jobs", st.jobs},
                {"workers", st.workers},
                {"rescued", st.rescued},
                {"rescued_jobs", st.rescued_jobs},
                {"fenced", st.fenced_writes},
                {"crash_loops", st.crash_loops}};
  });
  all["unfinished"] = Answer(s.JobCountUnfinished(), [](int64_t n) { return Json(n); });
  all["next_due"] = Answer(s.JobNextDueIn(), [](const std::optional<Millis>& d) {
    return d ? Json(d->count()) : Json();
  });
  all["backlog"] = Answer(s.JobBacklog({}), [](const auto& v) {
    return Each(v, [](const BacklogGroup& g) {
      return Json{g.queue, g.task, g.command, JobStateName(g.state), g.count, g.next_run_at};
    });
  });
  all["leader"] = Answer(s.LeaderRead("sweeper"), [](const std::optional<LeaderRow>& l) {
    return l ? Json{l->holder, l->expires_at, l->ttl.count(), l->holder_live} : Json();
  });
  return all;
}

class MemoryVsSqlite {
 public:
  MemoryVsSqlite(uint64_t seed, const std::string& dir) : rng_(seed) {
    StoreOptions o;
    o.clock = &clock_;
    o.durable = false;  // speed: nothing here outlives the test
    sqlite_ = std::move(OpenStore("sqlite:" + dir + "/diff.db", o)).value();
    memory_ = std::move(OpenStore("memory:" + dir, o)).value();
  }

  // Runs `steps` random operations; the first difference fails the test.
  void Run(int steps) {
    for (int i = 0; i < steps; ++i) {
      const auto [what, a, b] = Step();
      // Compared as values; as text (which gtest diffs) only when they differ.
      if (a != b) {
        ASSERT_EQ(a.dump(1), b.dump(1)) << "step " << i << ": " << what << " (sqlite, memory)";
      }
      if (i % 25 == 24 || i + 1 == steps) {
        const Json x = Everything(*sqlite_), y = Everything(*memory_);
        if (x != y) {
          ASSERT_EQ(x.dump(1), y.dump(1)) << "after step " << i << " (" << what << ")";
        }
      }
    }
  }

 private:
  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  bool Chance(int percent) { return Pick(100) < percent; }
  template <typename T>
  const T& OneOf(const std::vector<T>& v) { return v[Pick(static_cast<int>(v.size()))]; }

  JobSpec RandomSpec() {
    JobSpec s;
    s.queue = OneOf<std::string>({"default", "default", "other"});
    s.task = OneOf<std::string>({"t", "t", "u"});
    if (Chance(10)) s.command = "true";
    s.payload = {{"n", Pick(1000)}};
    s.priority = Pick(3);
    // No backoff: see the top of the file.
    s.retry = OneOf<RetryPolicy>({RetryPolicy::kNone, RetryPolicy::kNone, RetryPolicy::kDefault,
                                  RetryPolicy::kForever});
    s.max_attempts = 1 + Pick(3);
    s.max_crashes = s.retry == RetryPolicy::kNone ? 1 + Pick(3) : 1 + Pick(2);
    if (Chance(30)) s.delivery = Delivery::kAtMostOnce;
    if (Chance(15)) s.delay = Millis(500 * (1 + Pick(10)));
    if (Chance(10)) s.run_at = clock_.NowMs() + 1000 * (Pick(10) - 3);
    if (Chance(20)) s.lease = Millis(1000 * (1 + Pick(8)));
    if (Chance(15)) s.start_deadline = Millis(1000 * (1 + Pick(10)));
    if (Chance(20)) s.unique_key = OneOf<std::string>({"u1", "u2", "u3"});
    if (Chance(25)) s.concurrency_key = OneOf<std::string>({"k1", "k2"});
    return s;
  }

  // A running job of the database, as SQLite shows it (both show the same
  // or the comparison has failed already), with its token or a stale one.
  std::optional<JobRef> SomeRef() {
    auto leases = sqlite_->JobLeases();
    if (!leases.has_value() || leases->empty() || Chance(5)) {
      return JobRef{1 + Pick(static_cast<int>(next_job_)), Pick(3)};
    }
    JobRef ref = OneOf(*leases).ref;
    if (Chance(10)) ref.lease_token -= 1;
    return ref;
  }

  WorkerId SomeWorker() { return 1 + Pick(static_cast<int>(std::max<int64_t>(1, workers_))); }

  JobOutcome RandomOutcome(JobRef ref) {
    JobOutcome o;
    o.ref = ref;
    o.success = Chance(50);
    if (o.success) {
      if (Chance(30)) o.result = Json{{"r", Pick(10)}};
      if (Chance(15)) o.note = "ignored fd-3 line";
      return o;
    }
    auto job = sqlite_->JobGet(ref.id);
    if (job.has_value() && job->retry != RetryPolicy::kNone) {
      o.error.kind = OneOf<ErrorKind>({ErrorKind::kLost, ErrorKind::kReleased,
                                       ErrorKind::kCancelled});  // no backoff
    } else {
      o.error.kind = OneOf<ErrorKind>({ErrorKind::kError, ErrorKind::kCrash, ErrorKind::kTimeout,
                                       ErrorKind::kLost, ErrorKind::kReleased,
                                       ErrorKind::kCancelled});
    }
    o.error.message = fmt::format("failed {}", Pick(100));
    if (Chance(50)) o.error.exit_code = Pick(4);
    if (Chance(30)) o.error.signal = 9;
    if (Chance(50)) o.error.stderr_tail = "err";
    if (Chance(30)) o.error.stdout_tail = "out";
    return o;
  }

  // One operation on both stores: its name and each store's answer.
  std::tuple<std::string, Json, Json> Step() {
    auto both = [&](const std::string& what, auto op) {
      return std::tuple<std::string, Json, Json>(what, op(*sqlite_), op(*memory_));
    };
    const int op = Pick(24);
    if (op < 4) {
      std::vector<JobSpec> specs;
      for (int n = 1 + Pick(Chance(20) ? 40 : 3); n > 0; --n) specs.push_back(RandomSpec());
      auto out = both("insert", [&](Store& s) {
        return Answer(s.JobInsertMany(specs), [](const auto& v) {
          return Each(v, [](const EnqueueResult& e) { return Json{e.id, e.created}; });
        });
      });
      next_job_ += static_cast<int64_t>(specs.size());
      return out;
    }
    if (op < 9) {
      ClaimParams p;
      p.worker = SomeWorker();
      p.queues = OneOf<std::vector<std::string>>({{"default"}, {"default", "other"}, {}});
      p.tasks = OneOf<std::vector<std::string>>({{"t"}, {"t", "u"}, {}});
      // No tasks and no commands: SQLite fails the claim ("no query
      // solution": its planner finds no plan for a WHERE that is always
      // false), PostgreSQL and memory claim nothing. No worker asks so.
      p.allow_commands = p.tasks.empty() || Chance(30);
      p.limit = 1 + Pick(4);
      p.ahead = Pick(p.limit + 1);
      p.default_lease = Millis(1000 * (2 + Pick(8)));
      return both("claim", [&](Store& s) {
        return Answer(s.JobClaim(p), [](const auto& v) { return Each(v, JobJson); });
      });
    }
    if (op < 12) {
      std::vector<JobOutcome> outcomes;
      for (int n = 1 + Pick(4); n > 0; --n) outcomes.push_back(RandomOutcome(*SomeRef()));
      const WorkerId w = SomeWorker();
      return both("finish", [&](Store& s) {
        return Answer(s.JobFinishMany(w, outcomes), [](const std::vector<bool>& v) {
          return Json(v);
        });
      });
    }
    if (op == 12) {
      const JobRef ref = *SomeRef();
      return both("mark started", [&](Store& s) {
        return Answer(s.JobMarkStarted(ref), [](bool b) { return Json(b); });
      });
    }
    if (op == 13) {
      const JobRef ref = *SomeRef();
      const Json cp = {{"step", Pick(5)}};
      return both("checkpoint", [&](Store& s) {
        return Answer(s.JobCheckpoint(ref, cp), [](bool b) { return Json(b); });
      });
    }
    if (op == 14) {
      const WorkerId w = SomeWorker();
      return both("heartbeat", [&](Store& s) {
        return Answer(s.WorkerHeartbeat(w), [](const HeartbeatReply& r) {
          return Json{{"alive", r.alive},
                      {"cancel", r.cancel},
                      {"held", Each(r.held, [](const JobRef& h) {
                         return Json{h.id, h.lease_token};
                       })}};
        });
      });
    }
    if (op == 15) {
      WorkerRegistration r;
      r.name = fmt::format("w{}", Pick(6));
      r.node = "host";
      r.boot_id = "boot";
      r.pid = Pick(100);
      r.queues = {"default"};
      r.tasks = {"t", "u"};
      r.concurrency = 1 + Pick(4);
      r.allow_commands = Chance(30);
      r.keepalive = Millis(1000 * (1 + Pick(20)));
      auto out = both("register", [&](Store& s) {
        return Answer(s.WorkerRegister(r), [](WorkerId id) { return Json(id); });
      });
      if (std::get<1>(out).contains("ok")) ++workers_;
      return out;
    }
    if (op == 16) {
      // Verdicts reached some time ago, carried out now.
      if (seen_live_.empty() || Chance(40)) {
        seen_live_ = sqlite_->WorkerListLive("").value();
        seen_leases_ = sqlite_->JobLeases().value();
        return {"look", Json(), Json()};
      }
      if (Chance(50)) {
        return both("mark silent", [&](Store& s) {
          return Answer(s.WorkerMarkSilent(seen_live_, Millis(10'000)),
                        [](int n) { return Json(n); });
        });
      }
      return both("rescue silent", [&](Store& s) {
        return Answer(s.JobRescueSilent(seen_leases_),
                      [](const RescueReport& r) { return Json(r.rescued); });
      });
    }
    if (op == 17) {
      const WorkerId w = SomeWorker();
      switch (Pick(3)) {
        case 0:
          return both("declare dead", [&](Store& s) {
            return Answer(s.WorkerDeclareDead(w, "gone", LossCause::kProvenDeath, nullptr),
                          [](const RescueReport& r) { return Json(r.rescued); });
          });
        case 1:
          return both("stop", [&](Store& s) { return StatusJson(s.WorkerStop(w)); });
        default:
          return both("draining", [&](Store& s) { return StatusJson(s.WorkerSetDraining(w)); });
      }
    }
    if (op == 18) {
      const JobId id = 1 + Pick(static_cast<int>(next_job_ + 1));
      if (Chance(50)) {
        return both("cancel", [&](Store& s) {
          return Answer(s.JobCancel(id, {}), [](JobState st) { return Json(JobStateName(st)); });
        });
      }
      return both("retry", [&](Store& s) { return StatusJson(s.JobRetry(id, {}, {})); });
    }
    if (op == 19) {
      return Chance(50) ? both("expire", [](Store& s) {
        return Answer(s.JobExpire(), [](int n) { return Json(n); });
      })
                        : both("promote", [](Store& s) {
                            return Answer(s.JobPromote(), [](int n) { return Json(n); });
                          });
    }
    if (op == 20) {
      const Millis retention(1000 * Pick(30));
      return both("prune", [&](Store& s) {
        return Answer(s.Prune(retention), [](int n) { return Json(n); });
      });
    }
    if (op == 21) {
      const WorkerId w = SomeWorker();
      std::optional<LeaderRow> silent;
      if (Chance(50)) silent = sqlite_->LeaderRead("sweeper").value();
      const Millis ttl(1000 * (1 + Pick(5)));
      return both("leader", [&](Store& s) {
        return Answer(s.LeaderTryAcquire("sweeper", w, ttl, silent),
                      [](bool b) { return Json(b); });
      });
    }
    if (op == 22) {
      JobFilter f;
      if (Chance(60)) {
        for (int n = 1 + Pick(3); n > 0; --n) f.states.push_back(static_cast<JobState>(Pick(8)));
      }
      if (Chance(30)) f.queue = "other";
      if (Chance(30)) f.task = "u";
      f.limit = 1 + Pick(6);
      // The same, by last error and rescued too (no more draws: the
      // seeds' operations stay as they were).
      JobFilter g = f;
      g.error_kind = static_cast<ErrorKind>(f.limit % 7);
      JobFilter h = f;
      h.rescued = true;
      return both("list", [&](Store& s) {
        Json out = Json::array();
        for (const JobFilter* one : {&f, &g, &h}) {
          int64_t total = -1;
          out.push_back(
              Answer(s.JobList(*one, &total), [](const auto& v) { return Each(v, JobJson); }));
          out.push_back(total);
        }
        return out;
      });
    }
    const Millis step(Chance(10) ? 30'000 : 100 * Pick(40));
    clock_.Advance(step);
    return {"advance", Json(step.count()), Json(step.count())};
  }

  std::mt19937_64 rng_;
  FakeClock clock_;
  std::unique_ptr<Store> sqlite_;
  std::unique_ptr<Store> memory_;
  int64_t next_job_ = 0;  // jobs inserted (deduplicated or not)
  int64_t workers_ = 0;
  std::vector<WorkerLiveness> seen_live_;
  std::vector<LeaseRow> seen_leases_;
};

TEST(MemoryVsSqliteTest, RandomOperationsAnswerAlike) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    char tmpl[] = "/tmp/warden-diff-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    {
      MemoryVsSqlite run(seed, tmpl);
      run.Run(300);
    }
    std::filesystem::remove_all(tmpl);
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace warden::testing
