// The demo's run: setup, the faults, the wait, and the report with its
// invariant checks (demo/demo.h says what it shows).
#include "demo/demo.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/core.h>

#include "warden/duration.h"
#include "warden/invariants.h"
#include "warden/plural.h"
#include "warden/db_url.h"

namespace warden::demo {
namespace {

// The settings the demo's workers run with: shorter than the defaults so a
// frozen worker's lease runs out in seconds.
constexpr Millis kHeartbeat{200};
constexpr Millis kLease{3000};
constexpr Millis kSweep{250};

struct Proc {
  std::string name;
  pid_t pid = 0;
};

// A stdio stream (fopencookie(3)) whose every line goes to Host::log: the
// story is written with fmt::print whether it is text or a log. Unbuffered,
// so that its lines keep their order among the host's other log lines.
class LineSink {
 public:
  explicit LineSink(std::function<void(LogLevel, const std::string&)> log)
      : log_(std::move(log)) {
    cookie_io_functions_t io{};
    io.write = &LineSink::Write;
    file_ = fopencookie(this, "w", io);
    if (file_ != nullptr) std::setvbuf(file_, nullptr, _IONBF, 0);
  }
  ~LineSink() {
    if (file_ != nullptr) std::fclose(file_);
    Emit(pending_);
  }
  LineSink(const LineSink&) = delete;
  LineSink& operator=(const LineSink&) = delete;

  std::FILE* file() const { return file_; }  // null if it could not be made

 private:
  static ssize_t Write(void* cookie, const char* buf, size_t size) {
    auto* self = static_cast<LineSink*>(cookie);
    self->pending_.append(buf, size);
    for (size_t nl; (nl = self->pending_.find('\n')) != std::string::npos;) {
      self->Emit(self->pending_.substr(0, nl));
      self->pending_.erase(0, nl + 1);
    }
    return static_cast<ssize_t>(size);
  }
  void Emit(const std::string& line) {
    const size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos) return;
    const std::string text = line.substr(start);
    log_(text.find("FAIL") != std::string::npos ? LogLevel::kError : LogLevel::kInfo, text);
  }

  std::function<void(LogLevel, const std::string&)> log_;
  std::FILE* file_ = nullptr;
  std::string pending_;
};

TimeMs Now() {
  return std::chrono::duration_cast<Millis>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The database reaches the worker through WARDEN_DB, not its argv: a
// command line is visible to every user of the host (ps), and a
// PostgreSQL URL may hold a password.
pid_t SpawnWorker(const std::string& db, const std::string& queue, const std::string& name,
                  const std::string& log) {
  // Its own settings alone: no configuration file (docs/configuration.md).
  const std::vector<std::string> args = {
      "warden",        "--config",       "/dev/null",     "worker",         "--allow-cmd",
      "--queues",      queue,            "--name",
      name,            "--concurrency",  "4",
      "--heartbeat",   FormatDuration(kHeartbeat),
      "--lease",       FormatDuration(kLease),
      "--keepalive-threshold", FormatDuration(kLease),
      "--sweep-interval", FormatDuration(kSweep),
      "--kill-grace",  "500ms",
      "--shutdown-timeout", "5s"};
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // The demo runs no thread of its own, so its environment may change here;
  // the child inherits it. Nor do the operator's WARDEN_WORKER_* settings
  // reach its workers.
  setenv("WARDEN_DB", db.c_str(), 1);
  std::vector<std::string> settings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view var = *e;
    if (var.rfind("WARDEN_WORKER_", 0) == 0) settings.emplace_back(var.substr(0, var.find('=')));
  }
  for (const std::string& name : settings) unsetenv(name.c_str());
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, STDERR_FILENO);
      dup2(fd, STDOUT_FILENO);
    }
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  return pid;
}

class Demo {
 public:
  Demo(const Options& options, const Host& host)
      : options_(options),
        host_(host),
        sink_(host.log ? std::make_unique<LineSink>(host.log) : nullptr),
        text_(sink_ != nullptr && sink_->file() != nullptr ? sink_->file()
              : options.json                               ? stderr
                                                           : stdout) {}
  int Run();

 private:
  void Say(const std::string& line) {
    fmt::print(text_, "[{:5.1f}s] {}\n", (Now() - t0_) / 1000.0, line);
    std::fflush(text_);
  }
  Status Enqueue();
  // Waits until worker `name` holds at least one running job.
  Result<int> WaitUntilBusy(const std::string& name, Millis limit);
  Status WaitAllDone(Millis limit);
  int Report();
  // This run's jobs (a shared PostgreSQL database may hold others).
  Result<std::vector<JobInfo>> OurJobs();

  const Options options_;
  const Host& host_;
  std::unique_ptr<LineSink> sink_;  // with Host::log
  std::FILE* text_;  // the story: sink_, stdout, or stderr with --json
  Json report_ = Json::object();  // --json: printed last
  std::string dir_, db_, ledger_, queue_ = "default";
  int64_t fenced_before_ = 0, rescued_before_ = 0;
  std::unique_ptr<Client> client_;
  std::vector<Proc> workers_;
  TimeMs t0_ = 0;
  TimeMs kill_at_ = 0, stop_at_ = 0;
  std::string killed_, frozen_;
  std::set<JobId> at_most_once_;
};

Status Demo::Enqueue() {
  std::vector<JobSpec> specs;
  int keyed = 0;
  for (int i = 0; i < options_.jobs; ++i) {
    JobSpec s;
    s.task = "demo";
    s.queue = queue_;
    // The first dozen run long enough to be caught mid-job by the faults.
    const double secs = i < 12 ? 1.5 : 0.05 + (i % 5) * 0.04;
    s.command = fmt::format(
        "echo \"start $WARDEN_JOB_ID $WARDEN_ATTEMPT $WARDEN_LEASE_TOKEN\" >> '{}'; sleep {:.2f}; "
        "echo \"end $WARDEN_JOB_ID $WARDEN_ATTEMPT $WARDEN_LEASE_TOKEN\" >> '{}'",
        ledger_, secs, ledger_);
    s.payload = {{"n", i}};
    if (i % 10 == 3) s.delivery = Delivery::kAtMostOnce;
    if (i % 6 == 1) {
      s.concurrency_key = fmt::format("account-{}", i % 4);
      ++keyed;
    }
    s.max_attempts = 5;
    specs.push_back(std::move(s));
  }
  WARDEN_ASSIGN_OR_RETURN(auto ids, client_->EnqueueMany(specs));
  for (size_t i = 0; i < ids.size(); ++i) {
    if (specs[i].delivery == Delivery::kAtMostOnce) at_most_once_.insert(ids[i].id);
  }
  Say(fmt::format("enqueued {} command jobs ({} at-most-once, {} sharing 4 concurrency keys)",
                  options_.jobs, at_most_once_.size(), keyed));
  return Status::Ok();
}

Result<int> Demo::WaitUntilBusy(const std::string& name, Millis limit) {
  const TimeMs deadline = Now() + limit.count();
  while (Now() < deadline) {
    WARDEN_ASSIGN_OR_RETURN(auto workers, client_->ListWorkers());
    for (const auto& w : workers) {
      if (w.name == name && w.state == WorkerState::kActive && w.running > 0) return w.running;
    }
    std::this_thread::sleep_for(Millis(20));
  }
  return DeadlineExceeded("worker " + name + " never got a job");
}

Result<std::vector<JobInfo>> Demo::OurJobs() {
  JobFilter ours;
  ours.queue = queue_;
  ours.limit = options_.jobs * 2;
  return client_->ListJobs(ours);
}

Status Demo::WaitAllDone(Millis limit) {
  const TimeMs deadline = Now() + limit.count();
  TimeMs next_progress = 0;
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(auto jobs, OurJobs());
    std::map<std::string, int> by_state;
    int64_t unfinished = 0;
    for (const JobInfo& j : jobs) {
      ++by_state[JobStateName(j.state)];
      if (!IsTerminal(j.state)) ++unfinished;
    }
    std::string line;
    for (const auto& [state, n] : by_state) line += fmt::format("{} {}  ", state, n);
    if (Now() >= next_progress || unfinished == 0) {
      WARDEN_ASSIGN_OR_RETURN(Stats s, client_->GetStats());
      Say(line + fmt::format("| rescued {}, fenced {}", s.rescued - rescued_before_,
                             s.fenced_writes - fenced_before_));
      next_progress = Now() + 1000;
    }
    if (unfinished == 0) return Status::Ok();
    if (Now() > deadline) return DeadlineExceeded("jobs still unfinished");
    std::this_thread::sleep_for(Millis(100));
  }
}

int Demo::Run() {
  char tmpl[] = "/tmp/warden-demo-XXXXXX";
  if (!mkdtemp(tmpl)) return host_.fail(Unavailable("cannot create a temporary directory"));
  dir_ = tmpl;
  ledger_ = dir_ + "/ledger.txt";
  std::string prefix = "demo-";
  if (options_.pg_url.empty()) {
    db_ = dir_ + "/demo.db";
    fmt::print(text_, "warden demo: crash recovery on embedded SQLite\n");
    fmt::print(text_, "  database  {}   (worker logs beside it)\n", db_);
  } else {
    // A queue and worker names of its own: the database may be shared.
    db_ = options_.pg_url;
    prefix = fmt::format("demo-{}-", getpid());
    queue_ = fmt::format("demo-{}-{}", getpid(), Now());
    fmt::print(text_, "warden demo: crash recovery on PostgreSQL\n");
    fmt::print(text_, "  database  {}, queue {}\n  logs      {}\n", RedactDbUrl(db_), queue_, dir_);
  }
  report_["database"] = RedactDbUrl(db_);
  report_["queue"] = queue_;
  fmt::print(text_, "  workers   3 processes x 4 slots; heartbeat {}, lease {}, sweep {}\n\n",
             FormatDuration(kHeartbeat), FormatDuration(kLease), FormatDuration(kSweep));
  t0_ = Now();
  auto client = Client::Open(db_);
  if (!client.has_value()) return host_.fail(client.error());
  client_ = std::move(client).value();
  auto before = client_->GetStats();
  if (!before.has_value()) return host_.fail(before.error());
  fenced_before_ = before->fenced_writes;
  rescued_before_ = before->rescued;
  if (Status s = Enqueue(); !s.ok()) return host_.fail(s);

  for (int i = 1; i <= 3; ++i) {
    const std::string name = prefix + std::to_string(i);
    workers_.push_back(
        {name, SpawnWorker(db_, queue_, name, fmt::format("{}/{}.log", dir_, name))});
  }
  Say(fmt::format("started workers {} (pid {}), {} (pid {}), {} (pid {})", workers_[0].name,
                  workers_[0].pid, workers_[1].name, workers_[1].pid, workers_[2].name,
                  workers_[2].pid));

  auto cleanup = [&] {
    for (const auto& w : workers_) {
      kill(w.pid, SIGCONT);
      kill(w.pid, SIGKILL);
      waitpid(w.pid, nullptr, 0);
    }
  };
  auto busy = WaitUntilBusy(workers_[0].name, Millis(15'000));
  if (!busy.has_value()) {
    cleanup();
    return host_.fail(busy.error());
  }
  kill(workers_[0].pid, SIGKILL);
  kill_at_ = Now();
  killed_ = workers_[0].name;
  waitpid(workers_[0].pid, nullptr, 0);
  Say(fmt::format("SIGKILL {} (pid {}) while it runs {}", killed_, workers_[0].pid,
                  Plural(*busy, "job")));
  for (const TimeMs limit = Now() + 10'000; Now() < limit;) {
    auto workers = client_->ListWorkers();
    if (workers.has_value() &&
        std::any_of(workers->begin(), workers->end(), [&](const WorkerInfo& w) {
          return w.name == killed_ && w.state == WorkerState::kDead;
        })) {
      Say(fmt::format("{} proven dead and its jobs recovered, {:.0f} ms after the kill", killed_,
                      static_cast<double>(Now() - kill_at_)));
      break;
    }
    std::this_thread::sleep_for(Millis(5));
  }

  busy = WaitUntilBusy(workers_[1].name, Millis(15'000));
  if (!busy.has_value()) {
    cleanup();
    return host_.fail(busy.error());
  }
  const Millis frozen_for = kLease + Millis(1500);
  // SQLite's write lock cannot be taken from a frozen process: a worker
  // frozen inside a write transaction stalls every writer until it thaws
  // (nothing is lost, but nothing is rescued either). Freeze it outside one.
  auto probe = Client::Open(db_, Millis(300));
  if (!probe.has_value()) {
    cleanup();
    return host_.fail(probe.error());
  }
  for (int tries = 1;; ++tries) {
    kill(workers_[1].pid, SIGSTOP);
    if ((*probe)->CheckWritable().ok() || tries == 20) break;
    kill(workers_[1].pid, SIGCONT);
    Say(fmt::format("froze {} inside a write transaction; thawed it to try again",
                    workers_[1].name));
    std::this_thread::sleep_for(Millis(30));
  }
  stop_at_ = Now();
  frozen_ = workers_[1].name;
  Say(fmt::format("SIGSTOP {} (pid {}) while it runs {}; frozen for {} (lease {})",
                  frozen_, workers_[1].pid, Plural(*busy, "job"), FormatDuration(frozen_for),
                  FormatDuration(kLease)));
  std::this_thread::sleep_for(frozen_for);
  kill(workers_[1].pid, SIGCONT);
  Say(fmt::format("SIGCONT {}: it must stop its stale runs; their writes are fenced off", frozen_));

  Status done = WaitAllDone(Millis(90'000));
  for (size_t i = 1; i < workers_.size(); ++i) kill(workers_[i].pid, SIGTERM);
  for (size_t i = 1; i < workers_.size(); ++i) waitpid(workers_[i].pid, nullptr, 0);
  workers_.erase(workers_.begin());  // already reaped
  Say("workers stopped (SIGTERM)");
  if (!done.ok()) {
    cleanup();
    return host_.fail(done);
  }
  const int rc = Report();
  report_["kept"] = nullptr;
  if (!options_.keep && rc == 0) {
    std::filesystem::remove_all(dir_);
  } else {
    fmt::print(text_, "\nkept {} for inspection\n", dir_);
    report_["kept"] = dir_;
  }
  // A report that could not be made has printed its error document.
  if (options_.json && report_.contains("ok")) host_.print_json(report_);
  return rc;
}

int Demo::Report() {
  auto list = OurJobs();
  if (!list.has_value()) return host_.fail(list.error());
  auto workers = client_->ListWorkers();
  if (!workers.has_value()) return host_.fail(workers.error());
  std::map<WorkerId, std::string> worker_name;
  for (const auto& w : *workers) worker_name[w.id] = w.name;

  std::map<std::string, int> by_state;
  InvariantInput history;  // the store's and the ledger's
  struct Rescue {
    JobId id;
    std::string worker, fault, became;
    double recovered_s, running_s;  // after the fault; running_s < 0: not rerun
  };
  std::vector<Rescue> rescues;
  for (const JobInfo& brief : *list) {
    auto job = client_->GetJob(brief.id);
    if (!job.has_value()) return host_.fail(job.error());
    ++by_state[JobStateName(job->state)];
    for (size_t i = 0; i < job->attempts.size(); ++i) {
      const AttemptInfo& a = job->attempts[i];
      if (a.outcome != "lost") continue;
      const std::string& wname = worker_name[a.worker];
      const bool killed = wname == killed_;
      const TimeMs fault_at = killed ? kill_at_ : stop_at_;
      Rescue r{job->id, wname, killed ? "SIGKILL" : "SIGSTOP", "",
               (a.finished_at.value_or(fault_at) - fault_at) / 1000.0, -1};
      if (i + 1 < job->attempts.size()) {
        r.became = fmt::format("retried (attempt {})", job->attempts[i + 1].attempt);
        r.running_s = (job->attempts[i + 1].claimed_at - fault_at) / 1000.0;
      } else {
        r.became = fmt::format("{} ({})", JobStateName(job->state),
                               DeliveryName(job->delivery));
      }
      rescues.push_back(r);
    }
    history.jobs.push_back(std::move(*job));
  }
  auto stats = client_->GetStats();
  if (!stats.has_value()) return host_.fail(stats.error());

  // The ledger: what really started and ran to its end, outside the job
  // table.
  std::map<std::pair<JobId, int64_t>, size_t> run_of;  // (job, token) -> runs index
  std::ifstream ledger(ledger_);
  std::string word;
  JobId id;
  int attempt;
  int64_t token;
  while (ledger >> word >> id >> attempt >> token) {
    if (word == "start") {
      run_of[{id, token}] = history.runs.size();
      history.runs.push_back({id, attempt, token, 0, false});
    } else if (auto it = run_of.find({id, token}); word == "end" && it != run_of.end()) {
      history.runs[it->second].finished = true;
    }
  }
  const std::vector<InvariantResult> verdicts = CheckInvariants(history);
  for (const InvariantResult& inv : verdicts) {
    for (const std::string& e : inv.evidence) fmt::print(text_, "  {}: {}\n", inv.name, e);
  }

  fmt::print(text_, "\nResult\n  jobs by final state:");
  for (const auto& [state, n] : by_state) fmt::print(text_, " {} {}", state, n);
  fmt::print(text_, "\n  rescued jobs ({}):\n", rescues.size());
  fmt::print(text_, "    {:>6}  {:<8}  {:<8}  {:<24}  {:>10}  {:>14}\n", "job", "worker", "fault",
             "became", "recovered", "running again");
  std::vector<double> kill_times, stop_times;
  for (const auto& r : rescues) {
    fmt::print(text_, "    {:>6}  {:<8}  {:<8}  {:<24}  {:>9.3f}s  {:>14}\n", r.id, r.worker,
               r.fault,
               r.became, r.recovered_s,
               r.running_s < 0 ? std::string("-") : fmt::format("{:.3f}s", r.running_s));
    (r.fault == "SIGKILL" ? kill_times : stop_times).push_back(r.recovered_s);
  }
  fmt::print(text_,
             "  (times after the fault; a retried job waits for a free slot after recovery)\n");
  auto max_of = [](const std::vector<double>& v) {
    return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end());
  };
  fmt::print(text_, "  completions and failures refused by fencing: {}\n",
             stats->fenced_writes - fenced_before_);

  // The recovery bounds: proven death -> sweep interval + margin; otherwise
  // lease + 2 sweep intervals (silence is judged by watching: the verdict
  // comes up to a pass after the last renewal is first seen), + margin for
  // this loaded 2-core machine.
  const double kill_bound = (kSweep.count() + 1000) / 1000.0;
  const double stop_bound = (kLease.count() + 2 * kSweep.count() + 1500) / 1000.0;
  struct Check {
    std::string what;
    bool ok;
  };
  std::vector<Check> checks;
  for (const InvariantResult& inv : verdicts) checks.push_back({inv.name, inv.ok()});
  const std::vector<Check> bounds = {
      {fmt::format("SIGKILLed worker's jobs recovered within sweep + 1s ({:.2f}s); slowest {:.2f}s",
                   kill_bound, max_of(kill_times)),
       !kill_times.empty() && max_of(kill_times) <= kill_bound},
      {fmt::format("frozen worker's jobs recovered within lease + 2 sweeps + 1.5s ({:.2f}s); "
                   "slowest {:.2f}s",
                   stop_bound, max_of(stop_times)),
       max_of(stop_times) <= stop_bound},
  };
  checks.insert(checks.end(), bounds.begin(), bounds.end());
  fmt::print(text_, "\nInvariants\n");
  bool all_ok = true;
  Json invariants = Json::array();
  for (const auto& c : checks) {
    fmt::print(text_, "  [{}] {}\n", c.ok ? " ok " : "FAIL", c.what);
    all_ok = all_ok && c.ok;
    invariants.push_back({{"check", c.what}, {"ok", c.ok}});
  }
  Json states = Json::object();  // every state a key, zero included
  for (int st = 0; st <= static_cast<int>(JobState::kExpired); ++st) {
    states[JobStateName(static_cast<JobState>(st))] = 0;
  }
  for (const auto& [state, n] : by_state) states[state] = n;
  Json rescued = Json::array();
  for (const auto& r : rescues) {
    rescued.push_back({{"job", r.id},
                       {"worker", r.worker},
                       {"fault", r.fault},
                       {"became", r.became},
                       {"recovered_after_s", r.recovered_s},
                       {"running_again_after_s", r.running_s < 0 ? Json() : Json(r.running_s)}});
  }
  report_["jobs_by_state"] = states;
  report_["rescued"] = rescued;
  report_["fenced_writes"] = stats->fenced_writes - fenced_before_;
  report_["invariants"] = invariants;
  report_["ok"] = all_ok;
  fmt::print(text_, "\n{}\n", all_ok ? "all invariants hold" : "AN INVARIANT FAILED");
  return all_ok ? 0 : 1;
}

}  // namespace

int Run(const Options& options, const Host& host) { return Demo(options, host).Run(); }

}  // namespace warden::demo
