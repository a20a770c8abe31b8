// RuntimeSim: a world for warden's real worker runtime under the Scheduler
// (scheduler.h): a store (in-memory or SQLite) on a virtual clock, and
// worker processes, each a real Worker on a SimEnv (its clock, threads and
// host) whose store calls go over a SimLink (sim_store.h). Workers run
// handlers of task "work" that take `ms` of their worker's clock, fail
// their first attempt when `fail_first`, and keep a ledger of runs
// (core/invariants.h) and of violations seen as they run: a start without
// the attempt's lease, a run that goes on after the store took its job
// from it, two running jobs sharing a concurrency key.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <memory>
#include <string>
#include <vector>

#include "warden/invariants.h"
#include "runtime/worker_seams.h"
#include "scheduler.h"
#include "sim_env.h"
#include "sim_store.h"
#include "store/store.h"

namespace warden::sim {

constexpr TimeMs kEpoch = 1'800'000'000'000;
constexpr VirtUs kSecond = 1'000'000;

// One simulated worker process and the thread that runs Worker::Run.
struct SimWorkerProcess {
  std::unique_ptr<SimLink> link;
  std::unique_ptr<SimEnv> env;
  std::unique_ptr<Worker> worker;
  SimThread* run = nullptr;
  size_t host = 0;
  Status status;
  std::string log;
};

class RuntimeSim {
 public:
  // `url`: "memory:..." or a SQLite file. `session_proofs`: a memory
  // store's sessions prove deaths as PostgreSQL's (StoreOptions).
  RuntimeSim(uint64_t seed, const std::string& url, bool session_proofs = false)
      : sched_(seed), db_clock_(sched_, kEpoch) {
    path_ = url;
    options_.memory_session_proofs = session_proofs;
    options_.clock = &db_clock_;
    options_.durable = false;
    options_.jitter_seed = seed;
    auto admin = OpenStore(path_, options_);
    EXPECT_TRUE(admin.has_value()) << admin.error().ToString();
    admin_ = std::move(*admin);
  }

  ~RuntimeSim() {
    for (auto& p : workers_) {
      if (p->run != nullptr && !p->run->exited()) p->worker->Stop(true);
    }
    sched_.RunUntil(sched_.now() + 600 * kSecond);
  }

  // Jobs of task "work" that run `ms` of their worker's clock each.
  void Enqueue(int n, int64_t ms) {
    std::vector<JobSpec> specs(static_cast<size_t>(n));
    for (JobSpec& s : specs) {
      s.task = "work";
      s.payload = Json{{"ms", ms}};
    }
    Enqueue(specs);
  }
  void Enqueue(const std::vector<JobSpec>& specs) {
    ASSERT_TRUE(admin_->JobInsertMany(specs).has_value());
  }

  // A worker process `pid` named "w<pid>" (or `o.name`) on host number
  // `host` (each its own node, boot and pid namespace: a worker proves only
  // the deaths of its host's), its monotonic clock at `clock_rate` times
  // true time.
  SimWorkerProcess& StartWorker(int pid, WorkerOptions o, double clock_rate = 1.0,
                                size_t host = 0) {
    auto p = std::make_unique<SimWorkerProcess>();
    SimWorkerProcess* raw = p.get();
    p->link = std::make_unique<SimLink>(sched_, static_cast<uint64_t>(pid));
    p->env = std::make_unique<SimEnv>(sched_, Host(host), pid, pid, 1, kEpoch, clock_rate);
    p->host = host;
    if (o.name.empty()) o.name = "w" + std::to_string(pid);
    o.task_commands["cmd"] = "sim-job";
    o.log = [raw, this](const std::string& line) {
      raw->log += std::to_string(sched_.now() / 1000) + "ms " + line + "\n";
    };
    WorkerSeams seams;
    seams.env = p->env.get();
    seams.open_store = [this, raw]() -> Result<std::unique_ptr<Store>> {
      WARDEN_ASSIGN_OR_RETURN(auto store, OpenStore(path_, options_));
      return std::unique_ptr<Store>(std::make_unique<SimStore>(std::move(store), *raw->link));
    };
    auto w = CreateWorker(path_, o, seams);
    EXPECT_TRUE(w.has_value()) << w.error().ToString();
    p->worker = std::move(*w);
    SimEnv& env = *p->env;
    p->worker->Handle("work", [&env, this](JobContext& ctx) {
      if (env.killed()) return FailedPrecondition("killed");
      const int code = RunJob(
          ctx.id(), ctx.attempt(), ctx.lease_token(), ctx.payload(), ctx.checkpoint(), env,
          [&ctx] { return ctx.stop_requested(); }, -1,
          [&ctx](const Json& c) { (void)ctx.SaveCheckpoint(c); });
      if (code == kStopped) return FailedPrecondition("stopped");
      if (code != 0) return Internal("the first attempt fails");
      ctx.SetResult(Json{{"attempt", ctx.attempt()}});
      return Status::Ok();
    });
    // Task "cmd": the same work in a job's process (SimEnv::RunSubprocess).
    env.set_job_code([&env, this](const SubprocessSpec& spec, SimJobProcess& jp) {
      std::map<std::string, std::string> vars(spec.env.begin(), spec.env.end());
      const std::string& ckpt = vars["WARDEN_CHECKPOINT"];
      return RunJob(std::stoll(vars["WARDEN_JOB_ID"]), std::stoi(vars["WARDEN_ATTEMPT"]),
                    std::stoll(vars["WARDEN_LEASE_TOKEN"]), Json::parse(spec.stdin_data),
                    ckpt.empty() ? Json() : Json::parse(ckpt), env,
                    [&jp] { return jp.term || jp.killed; }, jp.group, nullptr);
    });
    p->link->after_call = [this](const std::string& method) {
      if (method == "JobClaim" || method == "WorkerHeartbeat") NoteLeases();  // what writes leases
      if (method == "JobCheckpoint") {
        for (const auto& [id, seen] : starts_) {
          if (auto j = admin_->JobGet(id); j.has_value()) NoteCheckpoint(id, j->checkpoint);
        }
      }
      CheckActiveRuns();
    };
    p->run = sched_.Spawn("run" + std::to_string(pid), pid,
                          [raw] { raw->status = raw->worker->Run(); });
    workers_.push_back(std::move(p));
    return *raw;
  }

  Result<std::vector<JobInfo>> RunningJobs() {
    JobFilter f;
    f.states = {JobState::kRunning};
    f.limit = 1000;
    return admin_->JobList(f, nullptr);
  }

  // After every store call: the true time at which each running job's
  // lease, as just written, runs out (a renewal is seen the moment it is
  // written; the store's own clock may have stepped since, so its values
  // are read against it now).
  void NoteLeases() {
    auto running = RunningJobs();
    if (!running.has_value()) return;
    const TimeMs db_now = db_clock_.NowMs();
    for (const JobInfo& j : *running) {
      if (!j.lease_expires_at) continue;
      LeaseSeen& l = leases_[{j.id, j.lease_token}];
      if (l.expires_at == *j.lease_expires_at) continue;
      l.expires_at = *j.lease_expires_at;
      l.until = sched_.now() + (*j.lease_expires_at - db_now) * 1000;
    }
  }

  // No job's code runs on past its lease (in true time), nor once the
  // store took the job from it, while its worker can act (checked after
  // every store call and as the code runs): its worker fenced it first, or
  // was frozen then and stops it as it thaws (a watchdog tick and a turn
  // of the job's loop: kThawGrace).
  void CheckActiveRuns() {
    for (const auto& run : active_) {
      const int group = run->env->group();
      // A worker frozen alone leaves its commands running: stale runs then
      // are warden's documented limit (docs/guarantees.md, "Limits of the
      // guarantees").
      if (run->ran_on || run->env->killed() || sched_.frozen(group) ||
          (run->job_group >= 0 && sched_.frozen(run->job_group)) ||
          sched_.now() <= sched_.thawed_at(group) + kThawGrace || run->stopped()) {
        continue;
      }
      std::string what;
      if (!StoreNamesLease(run->job, run->token)) {
        what = "after the store took it";
      } else if (auto l = leases_.find({run->job, run->token});
                 l != leases_.end() && sched_.now() > l->second.until) {
        what = "past its lease (" + std::to_string((sched_.now() - l->second.until) / 1000) +
               " ms)";
      } else {
        continue;
      }
      run->ran_on = true;
      violations_.push_back("job " + std::to_string(run->job) + " attempt " +
                            std::to_string(run->attempt) + " ran on at " +
                            std::to_string(sched_.now() / 1000) + " ms " + what);
    }
  }

  // (4) at this moment: no two running jobs share a concurrency key.
  void CheckKeys() {
    auto running = RunningJobs();
    if (!running.has_value()) return;
    for (std::string& c : RunningKeyConflicts(*running)) {
      violations_.push_back(std::to_string(sched_.now() / 1000) + " ms: " + c);
    }
  }

  // Every job, attempts filled.
  std::vector<JobInfo> Jobs(JobId last) {
    std::vector<JobInfo> out;
    for (JobId id = 1; id <= last; ++id) {
      auto j = admin_->JobGet(id);
      if (j.has_value()) out.push_back(std::move(*j));
    }
    return out;
  }

  int64_t Unfinished() {
    auto n = admin_->JobCountUnfinished();
    return n.has_value() ? *n : -1;
  }

  int64_t Count(JobState state) {
    auto stats = admin_->GetStats();
    if (!stats.has_value()) return -1;
    for (const auto& [s, n] : stats->jobs) {
      if (s == JobStateName(state)) return n;
    }
    return 0;
  }

  // Runs until every job of `total` succeeded or `limit` of virtual time.
  bool RunUntilAllSucceed(int64_t total, VirtUs limit) {
    for (VirtUs t = sched_.now(); t < limit; t += kSecond / 10) {
      sched_.RunUntil(t);
      if (Count(JobState::kSucceeded) == total) return true;
    }
    return false;
  }

  // SIGKILL: gone from its host, cut from the store, its threads unwound.
  void Kill(SimWorkerProcess& p) {
    p.env->Kill();
    p.link->killed = true;
    p.worker->Stop(/*release_now=*/true);
  }

  // Its host loses power: as Kill, but its sessions are left to the
  // server, which drops them only at their keepalive.
  void PowerOff(SimWorkerProcess& p) {
    p.link->power_lost = true;
    Kill(p);
  }

  void StopAll() {
    for (auto& p : workers_) p->worker->Stop();
    sched_.RunUntil(sched_.now() + 120 * kSecond);
    for (auto& p : workers_) {
      EXPECT_TRUE(p->run->exited()) << p->log;
      if (p->env->killed()) continue;
      // A worker that could not register (its store unreachable as it
      // started) exits with the error, as `warden worker` does, and never
      // ran anything; one that started stops cleanly.
      if (p->log.find("started as worker") == std::string::npos) {
        EXPECT_EQ(p->status.code(), StatusCode::kUnavailable) << p->status.ToString();
      } else {
        EXPECT_TRUE(p->status.ok()) << p->status.ToString();
      }
    }
  }

  SimHost& Host(size_t i) {
    while (hosts_.size() <= i) {
      auto h = std::make_unique<SimHost>();
      h->name = "sim-host-" + std::to_string(hosts_.size());
      h->boot_id = "sim-boot-" + std::to_string(hosts_.size());
      hosts_.push_back(std::move(h));
    }
    return *hosts_[i];
  }

  // The wall clock of host `i` steps, for its processes running and to come.
  void StepHostWall(size_t i, int64_t ms) {
    Host(i).wall_step_ms += ms;
    for (auto& p : workers_) {
      if (p->host == i && !p->env->killed()) p->env->sim_clock().StepWall(ms);
    }
  }

  Scheduler& sched() { return sched_; }
  Store& admin() { return *admin_; }
  const std::map<JobId, int>& ran_to_end() const { return ran_to_end_; }
  const std::vector<std::string>& violations() const { return violations_; }
  const std::vector<LedgerRun>& runs() const { return runs_; }
  SimClock& db_clock() { return db_clock_; }
  std::vector<std::unique_ptr<SimWorkerProcess>>& workers() { return workers_; }

 private:
  Scheduler sched_;
  std::vector<std::unique_ptr<SimHost>> hosts_;
  SimClock db_clock_;
  std::string path_;
  StoreOptions options_;
  std::unique_ptr<Store> admin_;
  std::vector<std::unique_ptr<SimWorkerProcess>> workers_;
  std::map<JobId, int> ran_to_end_;
  // A thawed worker's job may run this long after the store took it.
  static constexpr VirtUs kThawGrace = 250'000;

  bool StoreNamesLease(JobId id, int64_t token) {
    auto held = admin_->JobGet(id);
    return held.has_value() && held->state == JobState::kRunning && held->lease_token == token;
  }

  // A job's code running now.
  struct ActiveRun {
    JobId job;
    int attempt;
    int64_t token;
    std::function<bool()> stopped;  // its worker stopped it (or killed its process)
    SimEnv* env;                    // its worker's
    int job_group;                  // its process's (a command's); -1: in the worker
    bool ran_on = false;
  };
  static constexpr int kStopped = 2;

  // A job's checkpoint as the store has it now never goes back: a stale
  // attempt's late save is fenced off (checked as runs resume, and after
  // every JobCheckpoint call).
  void NoteCheckpoint(JobId id, const Json& checkpoint) {
    if (!checkpoint.is_object()) return;
    const std::pair<int, int> now{checkpoint.value("attempt", 0), checkpoint.value("step", 0)};
    auto& latest = checkpoints_[id];
    if (now < latest && ckpt_reported_.insert(id).second) {
      violations_.push_back("job " + std::to_string(id) + ": its checkpoint went back to " +
                            checkpoint.dump() + " from attempt " + std::to_string(latest.first) +
                            " step " + std::to_string(latest.second));
    }
    latest = std::max(latest, now);
  }

  // The code of a job of either task: `ms` of its worker's clock, in steps
  // of at most 100 ms, ending early when `stopped`; fails its first attempt
  // when `fail_first`; with `ckpt`, saves {"attempt", "step"} after each
  // step (`save`: handlers; commands send no control lines yet). Checked
  // at its start: the checkpoint it resumes from is an earlier attempt's.
  // 0: succeeded, 1: failed, kStopped.
  int RunJob(JobId id, int attempt, int64_t token, const Json& payload, const Json& checkpoint,
             SimEnv& env, std::function<bool()> stopped, int job_group,
             std::function<void(const Json&)> save) {
    ++starts_[id];
    if (checkpoint.is_object() && checkpoint.value("attempt", 0) >= attempt) {
      violations_.push_back("job " + std::to_string(id) + " attempt " + std::to_string(attempt) +
                            " resumed from " + checkpoint.dump() + ", not an earlier attempt's");
    }
    NoteCheckpoint(id, checkpoint);
    const size_t run = runs_.size();
    runs_.push_back({id, attempt, token, 0, false});
    // The start gate's promise: a job's code starts only while its lease
    // is this attempt's (the store still names its token).
    if (!StoreNamesLease(id, token)) {
      violations_.push_back("job " + std::to_string(id) + " attempt " + std::to_string(attempt) +
                            " started at " + std::to_string(sched_.now() / 1000) +
                            " ms without its lease");
    }
    CheckKeys();
    auto active = std::make_shared<ActiveRun>(
        ActiveRun{id, attempt, token, std::move(stopped), &env, job_group});
    active_.push_back(active);
    struct Ended {
      RuntimeSim* sim;
      std::shared_ptr<ActiveRun> run;
      ~Ended() { std::erase(sim->active_, run); }
    } ended{this, active};
    const int64_t until = env.clock().MonotonicMs() + payload["ms"].get<int64_t>();
    int step = 0;
    while (true) {
      // A killed process's code runs no more (its threads only unwind).
      if (active->stopped() || env.killed()) return kStopped;
      CheckActiveRuns();
      if (active->ran_on) return kStopped;
      if (env.clock().MonotonicMs() >= until) break;
      env.clock().SleepFor(Millis(std::min<int64_t>(100, until - env.clock().MonotonicMs())));
      if (save && payload.value("ckpt", false)) save(Json{{"attempt", attempt}, {"step", ++step}});
    }
    ++ran_to_end_[id];
    if (payload.value("fail_first", false) && attempt == 1) return 1;
    runs_[run].finished = true;
    return 0;
  }

  std::vector<std::shared_ptr<ActiveRun>> active_;
  struct LeaseSeen {
    TimeMs expires_at = -1;
    VirtUs until = kNever;  // in true time
  };
  std::map<std::pair<JobId, int64_t>, LeaseSeen> leases_;  // by (job, token)
  std::map<JobId, int> starts_;  // handler entries, by job
  std::map<JobId, std::pair<int, int>> checkpoints_;  // the latest (attempt, step) seen
  std::set<JobId> ckpt_reported_;
  std::vector<LedgerRun> runs_;
  std::vector<std::string> violations_;
};

}  // namespace warden::sim
