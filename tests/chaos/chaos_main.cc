// warden_chaos: runs a real workload against a real store while faults are
// injected for a bounded time, then checks docs/design.md's invariants against
// the store and a ledger of what really ran. See README.md in this directory.
//
//   warden_chaos --db sqlite [--seed S] [--duration 45s] [--jobs 2000] ...
//   warden_chaos --db pg-private | postgresql://... [--pg-cluster DIR]
//
// Exit status: 0 every invariant held, 1 one failed (or the run could not
// be carried out), 2 usage.
#include <fmt/core.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "backend_setup.h"
#include "checker.h"
#include "warden/duration.h"
#include "fault_plan.h"
#include "feeder.h"
#include "fleet.h"
#include "injector.h"
#include "node_admin.h"
#include "ledger.h"
#include "options.h"
#include "poll_until.h"
#include "report.h"
#include "sampler.h"
#include "warden/client.h"
#include "workload.h"

namespace chaos {

using warden::testing::PollUntil;
using warden::testing::ReapChildren;
namespace {

std::atomic<bool> g_interrupted{false};
void OnInterrupt(int) { g_interrupted = true; }

// Progress lines, on stdout and in the run directory's console.log (with
// wall-clock times, to line them up with the ledger and the worker logs).
class Console {
 public:
  explicit Console(int64_t t0) : t0_(t0) {}
  void Open(const std::string& path) { log_ = std::fopen(path.c_str(), "a"); }
  ~Console() {
    if (log_) std::fclose(log_);
  }
  void Say(const std::string& line) {
    std::lock_guard lock(mu_);
    const int64_t now = WallMs();
    fmt::print("[{:6.1f}s] {}\n", static_cast<double>(now - t0_) / 1000.0,
               line);
    std::fflush(stdout);
    if (log_) {
      fmt::print(log_, "{} {}\n", warden::FormatTime(now), line);
      std::fflush(log_);
    }
  }

 private:
  int64_t t0_;
  std::mutex mu_;
  std::FILE* log_ = nullptr;
};

void WriteFaults(const std::string& path,
                 const std::vector<FaultRecord>& faults) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return;
  // `closed` (node faults): when the node certainly took no work.
  fmt::print(f, "kind\tstart\tend\tpids\ttarget\tdetail\tskipped\tclosed\n");
  for (const FaultRecord& r : faults) {
    std::string pids;
    for (pid_t p : r.pids) {
      if (!pids.empty()) pids += ',';
      pids += std::to_string(p);
    }
    const auto time = [](int64_t ms) { return ms < 0 ? std::string("-") : warden::FormatTime(ms); };
    fmt::print(f, "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n", FaultName(r.kind), time(r.start_ms),
               time(r.end_ms), pids, r.target, r.detail, r.skipped ? "skipped" : "",
               r.closed_from < 0 ? std::string()
                                 : time(r.closed_from) + ".." + time(r.closed_until));
  }
  std::fclose(f);
}

std::string Progress(warden::Client& client) {
  auto stats = client.GetStats();
  if (!stats.has_value()) return "store busy: " + stats.error().ToString();
  std::string line = "jobs:";
  for (const auto& [state, n] : stats->jobs)
    line += fmt::format(" {} {}", state, n);
  return line + fmt::format(" | rescued {}, fenced {}", stats->rescued,
                            stats->fenced_writes);
}

// Every job of the run (both queues) with its attempts, and every worker row. Retried
// while the store is briefly unavailable.
bool Collect(warden::Client& client, int jobs, CheckInput* in,
             std::string* error) {
  for (int tries = 0; tries < 50; ++tries) {
    warden::JobFilter f;  // every queue: the store is the run's own
    f.limit = jobs * 2 + 100;
    auto list = client.ListJobs(f);
    auto workers = client.ListWorkers();
    if (!list.has_value() || !workers.has_value()) {
      *error = (list.has_value() ? workers.error() : list.error()).ToString();
      std::this_thread::sleep_for(Millis(200));
      continue;
    }
    in->jobs.clear();
    bool ok = true;
    for (const warden::JobInfo& brief : *list) {
      auto job = client.GetJob(brief.id);
      if (!job.has_value()) {
        *error = job.error().ToString();
        ok = false;
        break;
      }
      in->jobs.push_back(std::move(job).value());
    }
    if (!ok) continue;
    in->workers = std::move(workers).value();
    return true;
  }
  return false;
}

// One run, phase by phase: set up the store and the workers, open the
// fault window while the feeder enqueues, close it and drain, stop
// everything, then check and report.
class ChaosRun {
 public:
  ChaosRun(Options& o, Console& console)
      : o_(o),
        console_(console),
        say_([this](const std::string& l) { console_.Say(l); }) {}
  int Run();

 private:
  bool Setup();
  void FaultWindow(Injector& injector, Feeder& feeder);
  bool Drain(Feeder& feeder);
  // Stops every worker; notes in `in` what should not have been running.
  void StopEverything(CheckInput* in);
  int CheckAndReport(CheckInput& in);
  // Reaps the workers; one that died on its own is recorded and replaced.
  void PollFleet();
  void MaybeProgress();

  Options& o_;
  Console& console_;
  std::function<void(const std::string&)> say_;
  int64_t t0_ = WallMs(), window_start_ = 0, window_end_ = 0, drain_end_ = 0;
  int64_t next_progress_ = 0;
  std::string dir_, ledger_;
  const std::string queue_ = "chaos";
  std::string limited_queue_;  // "" with --limited-concurrency 0
  int command_workers_ = 0;
  BackendSetup backend_;
  std::unique_ptr<warden::Client> client_;
  std::vector<PlannedJob> workload_;
  std::unique_ptr<Fleet> fleet_;
  // Nodes: each slot's, and the registry as set up (node-1's capacity).
  std::vector<std::string> node_of_slot_;
  std::vector<warden::NodeSpec> inventory_;
  std::vector<std::string> unexpected_;
  int startup_failures_ = 0;
  int feeder_recognised_ = 0, feeder_failed_ = 0;
};

bool ChaosRun::Setup() {
  dir_ = o_.tmp_root + "/warden-chaos-XXXXXX";
  if (mkdtemp(dir_.data()) == nullptr) {
    fmt::print(stderr, "warden_chaos: cannot create a directory under {}\n",
               o_.tmp_root);
    return false;
  }
  console_.Open(dir_ + "/console.log");
  // A private PostgreSQL cluster lives under it and, as root, belongs to
  // the postgres user, who must be able to reach it.
  chmod(dir_.c_str(), 0755);
  command_workers_ = (o_.workers + 1) / 2;
  if (o_.limited_concurrency > 0) limited_queue_ = "chaos-limited";
  if (std::string e = backend_.Setup(o_, dir_, o_.workers); !e.empty()) {
    fmt::print(stderr, "warden_chaos: {}\n(run directory {})\n", e, dir_);
    return false;
  }
  fmt::print("warden chaos: {} | seed {:#018x}\n", backend_.name(), o_.seed);
  fmt::print(
      "  {} jobs, {} workers ({} `warden worker`, {} in-process) x {} slots; "
      "fault window {:.0f}s; faults:",
      o_.jobs, o_.workers, command_workers_, o_.workers - command_workers_,
      o_.concurrency, o_.duration.count() / 1000.0);
  for (FaultKind k : o_.faults) fmt::print(" {}", FaultName(k));
  if (!limited_queue_.empty()) {
    fmt::print("\n  flow control: {:.0f}% of the jobs in queue {}, concurrency limit {}",
               kLimitedShare * 100, limited_queue_, o_.limited_concurrency);
  }
  node_of_slot_ = NodesOfSlots(command_workers_, o_.workers - command_workers_, o_.nodes);
  for (int n = 1; n <= o_.nodes; ++n) {
    warden::NodeSpec spec;
    spec.name = "node-";
    spec.name += std::to_string(n);
    if (n == 1 && o_.node_capacity > 0) spec.capacity = o_.node_capacity;
    inventory_.push_back(spec);
  }
  if (!inventory_.empty()) {
    fmt::print("\n  nodes:");
    for (const warden::NodeSpec& spec : inventory_) {
      int slots = 0;
      std::string names;
      for (size_t s = 0; s < node_of_slot_.size(); ++s) {
        if (node_of_slot_[s] != spec.name) continue;
        slots += o_.concurrency;
        if (!names.empty()) names += ",";
        const bool cmd = s < static_cast<size_t>(command_workers_);
        names += cmd ? "cmd-" : "inproc-";
        names += std::to_string(cmd ? s + 1 : s - static_cast<size_t>(command_workers_) + 1);
      }
      fmt::print(" {} ({}: {} slots{})", spec.name, names, slots,
                 spec.capacity ? fmt::format(", capacity {}", *spec.capacity) : "");
    }
  }
  fmt::print("\n  run directory {}\n  rerun: {}\n\n", dir_, o_.RerunCommand());
  std::fflush(stdout);

  auto client = warden::Client::Open(backend_.runner_url(), Millis(500));
  if (!client.has_value()) {
    fmt::print(stderr, "warden_chaos: {}\n", client.error().ToString());
    return false;
  }
  client_ = std::move(client).value();
  if (!limited_queue_.empty()) {
    // Before any job of it exists: a limit holds for the claims that
    // begin after it is set (warden/flow.h).
    warden::QueueLimits limits;
    limits.concurrency = o_.limited_concurrency;
    auto set = client_->SetQueueLimits(limited_queue_, limits);
    if (!set.has_value()) {
      fmt::print(stderr, "warden_chaos: cannot limit queue {}: {}\n",
                 limited_queue_, set.error().ToString());
      return false;
    }
  }
  for (const warden::NodeSpec& spec : inventory_) {
    // Before any worker registers on it: a capacity holds for the claims
    // that begin after it is set.
    auto added = client_->AddNode(spec, /*set_capacity=*/true);
    if (!added.has_value()) {
      fmt::print(stderr, "warden_chaos: cannot add node {}: {}\n", spec.name,
                 added.error().ToString());
      return false;
    }
  }
  ledger_ = dir_ + "/ledger";
  workload_ = MakeWorkload({o_.seed, o_.jobs, o_.duration.count(), queue_,
                            limited_queue_, o_.job_bin, ledger_});

  FleetConfig fc;
  fc.warden_bin = o_.warden_bin;
  fc.worker_bin = o_.worker_bin;
  fc.ledger = ledger_;
  fc.queue = limited_queue_.empty() ? queue_ : queue_ + "," + limited_queue_;
  fc.dir = dir_;
  fc.db_url = backend_.worker_url();
  fc.command_workers = command_workers_;
  fc.inproc_workers = o_.workers - command_workers_;
  fc.concurrency = o_.concurrency;
  fc.heartbeat = o_.heartbeat;
  fc.lease = o_.lease;
  fc.sweep = o_.sweep;
  fc.shutdown_timeout = o_.shutdown_timeout;
  fc.hosts = backend_.hosts();
  fc.nodes = node_of_slot_;
  fleet_ = std::make_unique<Fleet>(fc);
  fleet_->StartAll();
  const bool registered = PollUntil(
      [&] {
        auto ws = client_->ListWorkers();
        return ws.has_value() &&
               std::count_if(ws->begin(), ws->end(),
                             [](const warden::WorkerInfo& w) {
                               return w.state == warden::WorkerState::kActive;
                             }) >= o_.workers;
      },
      Millis(30'000), Millis(50));
  if (!registered) say_("not every worker registered within 30 s; going on");
  return true;
}

void ChaosRun::PollFleet() {
  for (const ProcRecord& r : fleet_->Poll()) {
    const std::string log = proc::ReadFile(r.log_path + ".err");
    const std::string what =
        fmt::format("{} (pid {}) exited on its own with status {}; log {}",
                    r.name, r.pid, r.exit_code, r.log_path + ".err");
    // Respawned into a store outage: `warden worker` gives up at start-up
    // when it cannot reach the store (exit 1), unlike a running worker.
    if (r.exit_code == 1 &&
        log.find("started as worker") == std::string::npos &&
        log.find("unavailable") != std::string::npos) {
      ++startup_failures_;
      say_("could not start, the store being unavailable (respawning): " +
           what);
      continue;
    }
    say_("UNEXPECTED: " + what);
    unexpected_.push_back(what);
  }
  // A worker that died on its own is replaced (a killed one is respawned by
  // the injector, on its schedule).
  for (int s = 0; s < fleet_->slots(); ++s) {
    if (fleet_->Up(s)) continue;
    const ProcRecord* last = nullptr;
    for (const ProcRecord& r : fleet_->records()) {
      if (r.slot == s) last = &r;
    }
    if (last && !last->killed_by_us && WallMs() - last->end_ms > 500) {
      fleet_->Spawn(s, false);
    }
  }
}

void ChaosRun::MaybeProgress() {
  if (WallMs() < next_progress_) return;
  say_(Progress(*client_));
  next_progress_ = WallMs() + 5000;
}

void ChaosRun::FaultWindow(Injector& injector, Feeder& feeder) {
  window_start_ = WallMs();
  next_progress_ = window_start_ + 5000;
  feeder.Start(window_start_);
  while (WallMs() < window_start_ + o_.duration.count() && !g_interrupted) {
    injector.Tick(window_start_);
    PollFleet();
    MaybeProgress();
    std::this_thread::sleep_for(Millis(5));
  }
  window_end_ = WallMs();
  say_("fault window closes: no new faults; waiting for those under way");
  injector.CloseWindow();
  PollFleet();
}

bool ChaosRun::Drain(Feeder& feeder) {
  const int64_t deadline = WallMs() + o_.drain_timeout.count();
  feeder.Join(deadline);
  int64_t last_left = -1, progress_at = WallMs();
  while (!g_interrupted && WallMs() < deadline) {
    PollFleet();
    auto left = client_->CountUnfinished();
    if (left.has_value() && *left == 0) return true;
    if (left.has_value() && *left != last_left) {
      last_left = *left;
      progress_at = WallMs();
    }
    if (WallMs() - progress_at > o_.stall_timeout.count()) {
      say_(fmt::format("no job finished for {}: {} unfinished jobs are stuck",
                       warden::FormatDuration(o_.stall_timeout), last_left));
      return false;
    }
    MaybeProgress();
    std::this_thread::sleep_for(Millis(100));
  }
  return false;
}

void ChaosRun::StopEverything(CheckInput* in) {
  PollFleet();
  in->late_stoppers = fleet_->StopAll(Millis(15'000));
  // A stopped worker stops its jobs, and the supervisor of a killed one
  // kills them: nothing of ours should still run a moment later.
  PollUntil([&] { return LeftoverProcesses().empty(); }, Millis(2000),
            Millis(50));
  for (const auto& [pid, what] : LeftoverProcesses()) {
    in->leftovers.push_back(what);
    kill(pid, SIGKILL);
  }
  ReapChildren();
  in->unexpected_exits = unexpected_;
  in->procs = fleet_->records();
}

int ChaosRun::CheckAndReport(CheckInput& in) {
  in.options = &o_;
  in.workload = &workload_;
  in.ledger = ReadLedger(ledger_);
  WriteFaults(dir_ + "/faults.tsv", in.faults);
  std::string error;
  if (!Collect(*client_, o_.jobs, &in, &error)) {
    fmt::print(stderr,
               "warden_chaos: cannot read the jobs back: {}\n(run directory "
               "{})\n",
               error, dir_);
    return 1;
  }
  RunFacts facts;
  facts.backend = backend_.name();
  facts.window_s = static_cast<double>(window_end_ - window_start_) / 1000.0;
  facts.drain_s = static_cast<double>(drain_end_ - window_end_) / 1000.0;
  facts.total_s = static_cast<double>(WallMs() - t0_) / 1000.0;
  facts.startup_failures = startup_failures_;
  facts.feeder_recognised = feeder_recognised_;
  facts.feeder_failed = feeder_failed_;
  if (auto stats = client_->GetStats(); stats.has_value()) {
    facts.fenced_writes = stats->fenced_writes;
    facts.rescued = stats->rescued;
  }
  const CheckResult result = Check(in);
  const bool keep = o_.keep || !result.ok() || g_interrupted;
  if (keep) facts.run_dir = dir_;
  client_.reset();
  PrintReport(o_, facts, in.faults, result);
  backend_.Teardown(keep);
  if (!backend_.kept_database().empty()) {
    fmt::print("kept: {}\n", backend_.kept_database());
  }
  if (!keep) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  if (g_interrupted) {
    fmt::print("interrupted\n");
    return 1;
  }
  return result.ok() ? 0 : 1;
}

int ChaosRun::Run() {
  if (!Setup()) return 1;
  const std::vector<PlannedFault> plan =
      PlanFaults(o_, fleet_->slots(), command_workers_, backend_.target().side_of_slot,
                 node_of_slot_);
  Injector injector(o_, *fleet_, backend_.target(), plan, dir_, say_);
  std::unique_ptr<NodeAdmin> admin;
  if (!inventory_.empty()) {
    admin = std::make_unique<NodeAdmin>(backend_.runner_url());
    injector.SetNodes(admin.get(), inventory_);
  }
  Feeder feeder(backend_.runner_url(), workload_, say_);
  std::unique_ptr<FlowSampler> sampler;
  std::vector<std::string> limited_nodes;
  for (const warden::NodeSpec& spec : inventory_) {
    if (spec.capacity) limited_nodes.push_back(spec.name);
  }
  if (!limited_queue_.empty() || !limited_nodes.empty()) {
    sampler = std::make_unique<FlowSampler>(backend_.runner_url(), limited_queue_, limited_nodes);
    sampler->Start();
  }
  say_(fmt::format("fault window opens: {} faults planned", plan.size()));
  FaultWindow(injector, feeder);
  CheckInput in;
  in.drained = Drain(feeder);
  drain_end_ = WallMs();
  if (sampler) {
    sampler->Stop();
    in.limited_queue = limited_queue_;
    in.limit = limited_queue_.empty() ? 0 : o_.limited_concurrency;
    in.flow_samples = sampler->samples();
    in.flow_sample_failures = sampler->failed();
    in.node_samples = sampler->node_samples();
    in.node_sample_failures = sampler->node_failed();
  }
  for (const warden::NodeSpec& spec : inventory_) {
    if (spec.capacity) in.node_limits[spec.name] = *spec.capacity;
  }
  in.nodes = !inventory_.empty();
  say_(in.drained ? "every job finished; stopping the workers (SIGTERM)"
                  : "DRAIN FAILED; stopping the workers (SIGTERM)");
  StopEverything(&in);
  in.faults = injector.records();
  in.ids = feeder.ids();
  feeder_recognised_ = feeder.recognised();
  feeder_failed_ = feeder.failed_attempts();
  return CheckAndReport(in);
}

int Main(int argc, char** argv) {
  Options o;
  int code = 0;
  if (!ParseOptions(argc, argv, &o, &code)) return code;
  signal(SIGPIPE, SIG_IGN);
  signal(SIGINT, OnInterrupt);
  signal(SIGTERM, OnInterrupt);
  // Job processes orphaned by a killed worker come to us, so nothing the
  // run started outlives it unnoticed.
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  Console console(WallMs());
  return ChaosRun(o, console).Run();
}

}  // namespace
}  // namespace chaos

int main(int argc, char** argv) { return chaos::Main(argc, argv); }
