#include "warden/client.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "warden/duration.h"
#include "warden/text.h"
#include "client/workers_shown.h"
#include "env/env.h"
#include "maintenance/inventory_sync.h"
#include "maintenance/recovery_metrics.h"
#include "maintenance/sweeper.h"
#include "store/store.h"
#include "warden/worker.h"

namespace warden {

Client::Client(std::unique_ptr<Store> store) : store_(std::move(store)) {}

Client::~Client() = default;

Result<std::unique_ptr<Client>> Client::Open(const std::string& db_url, Millis busy_timeout) {
  StoreOptions options;
  options.busy_timeout = busy_timeout;
  WARDEN_ASSIGN_OR_RETURN(auto store, OpenStore(db_url, options));
  return std::unique_ptr<Client>(new Client(std::move(store)));
}

Result<std::unique_ptr<Client>> Client::OpenExisting(const std::string& db_url,
                                                     Millis busy_timeout) {
  StoreOptions options;
  options.busy_timeout = busy_timeout;
  options.create_if_missing = false;
  WARDEN_ASSIGN_OR_RETURN(auto store, OpenStore(db_url, options));
  return std::unique_ptr<Client>(new Client(std::move(store)));
}

namespace {

// Payloads parsed from text are checked by ParseJsonText; a payload built in
// code is checked here, before dump() recurses once per level and overflows
// the stack (100k levels crash it). Iterative, so that the check itself
// cannot overflow.
bool DeeperThan(const Json& root, int max_depth) {
  std::vector<std::pair<const Json*, int>> todo = {{&root, 1}};
  while (!todo.empty()) {
    auto [j, depth] = todo.back();
    todo.pop_back();
    if (!j->is_structured()) continue;
    if (depth > max_depth) return true;
    for (const Json& child : *j) todo.emplace_back(&child, depth + 1);
  }
  return false;
}

Status CheckPayload(const Json& payload) {
  // What Json::parse(text, nullptr, false) returns for bad text.
  if (payload.is_discarded()) {
    return InvalidArgument("the payload is not valid JSON (a discarded parse result)");
  }
  if (DeeperThan(payload, kMaxJsonDepth)) {
    return InvalidArgument("the payload nests deeper than " + std::to_string(kMaxJsonDepth) +
                           " levels");
  }
  // Strict, unlike JsonText: bytes that are not UTF-8 are refused here
  // rather than stored as U+FFFD.
  size_t bytes = 0;
  try {
    bytes = payload.dump().size();
  } catch (const Json::type_error&) {
    return InvalidArgument("the payload has a string that is not valid UTF-8");
  }
  if (bytes > kMaxPayloadBytes) {
    return InvalidArgument("payload is " + std::to_string(bytes) + " bytes; the limit is " +
                           std::to_string(kMaxPayloadBytes));
  }
  return Status::Ok();
}

// A name must be one a worker can serve and every backend stores alike:
// UTF-8 (PostgreSQL refuses anything else), without NUL (PostgreSQL cuts
// text at NUL, so `k\0a` and `k\0b` would be one key there and two on
// SQLite) or other control characters.
}  // namespace

Status ValidateName(const std::string& what, const std::string& v, bool required) {
  if (required && v.empty()) return InvalidArgument(what + " must not be empty");
  if (v.size() > kMaxNameBytes) {
    return InvalidArgument(what + " is longer than " + std::to_string(kMaxNameBytes) + " bytes");
  }
  if (const size_t at = InvalidUtf8At(v); at != std::string::npos) {
    return InvalidArgument(what + " is not valid UTF-8 (byte " + std::to_string(at) + "): '" +
                           OneLine(v, 60) + "'");
  }
  for (const char c : v) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      return InvalidArgument(what + " must not contain NUL or other control characters: '" +
                             OneLine(v, 60) + "'");
    }
  }
  // Characters that do not show would make two names look alike (a queue
  // `ma\u200bil` beside `mail`, one paused), or a name look like another.
  if (const HiddenCharacter h = FirstHiddenCharacter(v); h.code_point != 0) {
    return InvalidArgument(what + " must not contain " + CodePointName(h.code_point) + " (" +
                           h.what + ", which does not show): '" +
                           OneLine(ShowHidden(v), 80) + "'");
  }
  return Status::Ok();
}

// `warden worker --queues a,b` splits at commas (SplitList): a queue whose
// name has one could never be served.
Status ValidateQueueName(const std::string& queue) {
  WARDEN_RETURN_IF_ERROR(ValidateName("queue", queue, true));
  if (queue.find(',') != std::string::npos) {
    return InvalidArgument("queue must not contain ',' (warden worker --queues splits at "
                           "commas): '" + OneLine(queue, 60) + "'");
  }
  return Status::Ok();
}

Status ValidateSpec(const JobSpec& spec) {
  WARDEN_RETURN_IF_ERROR(ValidateName("task", spec.task, true));
  WARDEN_RETURN_IF_ERROR(ValidateQueueName(spec.queue));
  WARDEN_RETURN_IF_ERROR(ValidateName("unique key", spec.unique_key, false));
  WARDEN_RETURN_IF_ERROR(ValidateName("concurrency key", spec.concurrency_key, false));
  // What `warden worker` could never name: it splits --task NAME=COMMAND
  // at the first '=' (and --queues a,b at commas: ValidateQueueName).
  if (spec.task.find('=') != std::string::npos) {
    return InvalidArgument("task must not contain '=' (warden worker --task NAME=COMMAND "
                           "splits at the first '='): '" + OneLine(spec.task, 60) + "'");
  }
  // sh -c takes the command as a C string, and PostgreSQL stores only UTF-8.
  if (spec.command.find('\0') != std::string::npos) {
    return InvalidArgument("command must not contain NUL");
  }
  if (const size_t at = InvalidUtf8At(spec.command); at != std::string::npos) {
    return InvalidArgument("command is not valid UTF-8 (byte " + std::to_string(at) + ")");
  }
  if (spec.max_attempts < 1) return InvalidArgument("max attempts must be at least 1");
  if (spec.max_crashes < 1) return InvalidArgument("max crashes must be at least 1");
  if (spec.timeout.count() <= 0) return InvalidArgument("timeout must be positive");
  if (spec.lease && spec.lease->count() < 1000) {
    return InvalidArgument("lease must be at least 1s");
  }
  if (spec.delay.count() < 0) return InvalidArgument("delay must not be negative");
  if (spec.run_at && spec.delay.count() > 0) {
    return InvalidArgument("give a delay or a run_at time, not both");
  }
  if (spec.start_deadline && spec.start_deadline->count() <= 0) {
    return InvalidArgument("start deadline must be positive");
  }
  return CheckPayload(spec.payload);
}

Result<EnqueueResult> Client::Enqueue(const JobSpec& spec) {
  WARDEN_ASSIGN_OR_RETURN(auto r, EnqueueMany(std::span<const JobSpec>(&spec, 1)));
  return r[0];
}

Result<std::vector<EnqueueResult>> Client::EnqueueMany(std::span<const JobSpec> specs) {
  for (const JobSpec& s : specs) WARDEN_RETURN_IF_ERROR(ValidateSpec(s));
  return store_->JobInsertMany(specs);  // wakes idle workers itself
}

Result<JobInfo> Client::GetJob(JobId id) { return store_->JobGet(id); }

Result<std::vector<JobInfo>> Client::ListJobs(const JobFilter& filter, int64_t* total) {
  if (filter.limit < 1) return InvalidArgument("limit must be at least 1");
  return store_->JobList(filter, total);
}

// Each action writes its audit entry in its own transaction: an action
// that happened is in the log.
Status Client::RetryJob(JobId id, const RetryOptions& retry) {
  // A plain retry's target stays the bare id it has always been.
  const std::string target =
      retry.fresh ? Json{{"job", id}, {"fresh", true}}.dump() : std::to_string(id);
  WARDEN_RETURN_IF_ERROR(
      store_->JobRetry(id, retry, AuditEntry{0, 0, actor_, "job.retry", target, 1}));
  store_->NotifyWorkers();
  return Status::Ok();
}

Status Client::RunJobNow(JobId id) {
  WARDEN_RETURN_IF_ERROR(
      store_->JobRunNow(id, AuditEntry{0, 0, actor_, "job.run_now", std::to_string(id), 1}));
  store_->NotifyWorkers();
  return Status::Ok();
}

Result<JobState> Client::CancelJob(JobId id) {
  return store_->JobCancel(id, AuditEntry{0, 0, actor_, "job.cancel", std::to_string(id), 1});
}

Result<int64_t> Client::CountUnfinished() { return store_->JobCountUnfinished(); }

Result<std::vector<WorkerInfo>> Client::ListWorkers(bool live_only) {
  WARDEN_ASSIGN_OR_RETURN(ShownWorkers shown, ReadShownWorkers(*store_, live_only));
  return std::move(shown.workers);
}

Result<int> Client::ReleaseWorker(const std::string& name_or_id, bool force) {
  WARDEN_ASSIGN_OR_RETURN(auto workers, store_->WorkerList(false));
  int64_t as_id = 0;
  const auto [ptr, ec] =
      std::from_chars(name_or_id.data(), name_or_id.data() + name_or_id.size(), as_id);
  const bool numeric = ec == std::errc() && ptr == name_or_id.data() + name_or_id.size();
  const WorkerInfo* match = nullptr;
  for (const WorkerInfo& w : workers) {
    const bool live = w.state == WorkerState::kActive || w.state == WorkerState::kDraining;
    if ((numeric && w.id == as_id) || (live && w.name == name_or_id)) match = &w;
  }
  if (!match) {
    return NotFound("no live worker named or numbered '" + OneLine(name_or_id, 60) + "'");
  }
  if (!force) {
    // Releasing is for a worker whose host is gone. One whose process runs
    // on this host is not gone: declaring it dead would stop its jobs and
    // charge each a crash.
    WARDEN_ASSIGN_OR_RETURN(auto live, store_->WorkerListLive(match->name));
    for (const WorkerLiveness& w : live) {
      if (w.id != match->id) continue;
      const std::string proof = ProofOfLife(w, DefaultEnv());
      if (!proof.empty()) {
        return FailedPrecondition("worker " + OneLine(match->name, 60) + " (id " +
                                  std::to_string(match->id) + ") is alive: " + proof +
                                  "; stop it with SIGTERM (kill " + std::to_string(w.pid) +
                                  "), or release it anyway with --force");
      }
    }
  }
  const Clock& clock = DefaultEnv().clock();
  const int64_t start = clock.MonotonicMs();
  const AuditEntry audit{0, 0, actor_, "worker.release",
                         match->name + " (id " + std::to_string(match->id) + ")", 0};
  WARDEN_ASSIGN_OR_RETURN(RescueReport r,
                          DeclareDeadPatiently(*store_, clock, match->id, "released by an operator",
                                               LossCause::kOperator, &audit));
  store_->NotifyWorkers();
  Metrics counted;
  CountRecoveries(counted, RecoveriesOf(r, "operator", Millis(clock.MonotonicMs() - start)));
  // Best effort: the release happened; a count lost here is only a count.
  (void)store_->MetricsAdd(counted.Snapshot());
  return r.rescued;
}

Result<Stats> Client::GetStats() { return store_->GetStats(); }

Result<std::vector<BacklogGroup>> Client::Unserved() {
  WARDEN_ASSIGN_OR_RETURN(auto claiming, ClaimingWorkers(*store_));
  WARDEN_ASSIGN_OR_RETURN(auto backlog, store_->JobBacklog({}));
  return warden::Unserved(backlog, claiming);
}

Result<bool> Client::AnyWorkerRuns(const JobSpec& spec) {
  WARDEN_ASSIGN_OR_RETURN(const std::vector<Serving> claiming, ClaimingWorkers(*store_));
  return std::any_of(claiming.begin(), claiming.end(), [&](const Serving& s) {
    return CanRun(s, spec.queue, spec.task, !spec.command.empty());
  });
}

Result<SweepSummary> Client::Sweep(Millis keepalive_threshold, Millis watch) {
  // A worker refuses a keepalive threshold under three of its own heartbeat
  // intervals. A sweep from outside cannot see the heartbeat interval of the
  // workers it judges (their rows do not record it), so it holds to the
  // threshold every worker uses unless told otherwise: a shorter one would
  // declare dead a live worker whose heartbeats are merely late, and that
  // worker would stop its jobs (each charged a crash).
  const Millis floor = WorkerOptions{}.keepalive_threshold;
  if (keepalive_threshold < floor) {
    return InvalidArgument("the keepalive threshold (" + FormatDuration(keepalive_threshold) +
                           ") must be at least " + FormatDuration(floor) +
                           ", the workers' default: a sweep cannot see the heartbeat intervals "
                           "of live workers, and a shorter threshold declares dead a worker "
                           "whose heartbeats are only late");
  }
  SweepOptions o;
  o.keepalive_threshold = keepalive_threshold;
  // Silence is judged by watching rows stay unchanged (core/silence.h): a
  // single pass finds nothing silent, passes over `watch` find what stayed
  // silent for its whole length within it.
  Env& env = DefaultEnv();
  const Clock& clock = env.clock();
  const int64_t until = clock.MonotonicMs() + watch.count();
  SilenceJudge judge;
  SweepSummary total;
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(auto live, store_->WorkerListLive(""));
    judge.BeginPass(clock.MonotonicMs());
    WARDEN_ASSIGN_OR_RETURN(SweepSummary r, SweepOnce(*store_, o, judge, env, live));
    judge.EndPass();
    total.proven_dead += r.proven_dead;
    total.presumed_dead += r.presumed_dead;
    total.rescued += r.rescued;
    total.expired += r.expired;
    total.promoted += r.promoted;
    Metrics counted;
    CountRecoveries(counted, r.recoveries);
    (void)store_->MetricsAdd(counted.Snapshot());  // best effort, as above
    total.recoveries.insert(total.recoveries.end(), r.recoveries.begin(), r.recoveries.end());
    if (r.rescued > 0 || r.promoted > 0) store_->NotifyWorkers();
    const int64_t left = until - clock.MonotonicMs();
    if (left <= 0) break;
    clock.SleepFor(Millis(std::min<int64_t>(left, 250)));
  }
  return total;
}

Result<int> Client::SchemaVersion() { return store_->SchemaVersion(); }

Result<TimeMs> Client::StoreNow() { return store_->Now(); }

Status Client::CheckWritable() { return store_->CheckWritable(); }

}  // namespace warden
