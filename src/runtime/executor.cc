// Running one claimed job: a command under the subprocess supervisor, or an
// in-process handler; and turning how it ended into an outcome.
#include <csignal>
#include <cstring>
#include <optional>
#include <sstream>

#include "warden/duration.h"
#include "warden/text.h"
#include "core/lease.h"
#include "runtime/checkpoint_writer.h"
#include "runtime/worker_impl.h"

namespace warden {
namespace {

constexpr const char* kUnprovenLease =
    "this worker could no longer prove its lease was its own (it was frozen, or its "
    "heartbeats failed, for most of the lease)";

ErrorKind KindFor(StopReason why) {
  switch (why) {
    case StopReason::kCancel:
      return ErrorKind::kCancelled;
    case StopReason::kShutdown:
    case StopReason::kNodeDrain:
      return ErrorKind::kReleased;
    case StopReason::kFence:
    case StopReason::kNone:
      break;
  }
  return ErrorKind::kLost;
}

const char* StopWhy(StopReason why) {
  switch (why) {
    // Shown after the outcome's kind ("released: its worker shut down"):
    // none repeats it.
    case StopReason::kCancel:
      return "an operator cancelled it";
    case StopReason::kShutdown:
      return "its worker shut down gracefully";
    case StopReason::kNodeDrain:
      return "its node takes no more work (disabled or removed) and the drain's "
             "--shutdown-timeout ran out";
    case StopReason::kFence:
      return "this worker lost its lease";
    case StopReason::kNone:
      break;
  }
  return "stopped";
}

// "job 12 (resize) attempt 2": how log lines name a job.
std::string JobLabel(const RunningJob& r) {
  return "job " + std::to_string(r.job.id) + " (" + OneLine(r.job.task, 60) + ") attempt " +
         std::to_string(r.job.attempt);
}

// The facts of a line about a job, for the JSON format (warden/log.h).
Json JobFields(const RunningJob& r) {
  return {{"task", r.job.task}, {"queue", r.job.queue}, {"attempt", r.job.attempt}};
}

JobOutcome Failure(const RunningJob& r, ErrorKind kind, std::string message) {
  JobOutcome o;
  o.ref = JobRef{r.job.id, r.job.lease_token};
  o.success = false;
  o.error.kind = kind;
  o.error.message = std::move(message);
  return o;
}

class HandlerContext final : public JobContext {
 public:
  HandlerContext(RunningJob& r, Store& store, Env& env) : r_(r), store_(store), env_(env) {}
  JobId id() const override { return r_.job.id; }
  const std::string& task() const override { return r_.job.task; }
  int attempt() const override { return r_.job.attempt; }
  int64_t lease_token() const override { return r_.job.lease_token; }
  const Json& payload() const override { return r_.job.payload; }
  const Json& checkpoint() const override { return r_.job.checkpoint; }
  Status SaveCheckpoint(const Json& checkpoint) override {
    // Not the store call itself: one held up by a locked file or a lost
    // connection would keep the handler from seeing a stop (self-fencing)
    // until after its lease had passed on.
    // Made on the first checkpoint: most jobs never save one, and a short
    // job should not pay for the writer.
    if (!checkpoints_) {
      checkpoints_.emplace(
          env_,
          [this](const Json& c) {
            return store_.JobCheckpoint(JobRef{r_.job.id, r_.job.lease_token}, c);
          },
          [this] { r_.stop.Request(StopReason::kFence); });
    }
    WARDEN_RETURN_IF_ERROR(
        checkpoints_->SaveAndWait(checkpoint, [this] { return stop_requested(); }));
    r_.job.checkpoint = checkpoint;
    return Status::Ok();
  }
  void SetResult(Json result) override { result_ = std::move(result); }
  bool stop_requested() const override { return r_.stop.requested() || r_.timed_out; }
  Json& result() { return result_; }
  // Waits for a checkpoint write still under way, so the outcome is
  // recorded after it.
  void FinishCheckpoints() {
    if (checkpoints_) checkpoints_->Finish();
  }

 private:
  RunningJob& r_;
  Store& store_;
  Env& env_;
  std::optional<CheckpointWriter> checkpoints_;
  Json result_;
};

}  // namespace

Result<bool> Worker::Impl::MarkStarted(RunningJob& r) {
  const int64_t deadline = r.claim_start_mono + r.lease.count();
  Millis backoff(20);
  while (true) {
    auto marked = claim_store_->JobMarkStarted(JobRef{r.job.id, r.job.lease_token});
    if (marked.has_value() || !Retrying(marked.error(), deadline, &backoff)) return marked;
  }
}

JobOutcome Worker::Impl::NotStarted(RunningJob& r) {
  Log(LogLevel::kWarn, "job " + std::to_string(r.job.id) + ": not started: " + kUnprovenLease,
      r.job.id);
  // A stop asked meanwhile (a shutdown's release, a cancel) says best how
  // it ended; otherwise it is lost like a job the watchdog fenced.
  const ErrorKind kind = r.stop.requested() ? KindFor(r.stop.reason()) : ErrorKind::kLost;
  r.stop.Request(StopReason::kFence);
  r.started_mono = 0;  // it did not run: no timeout, no job time
  return Failure(r, kind, std::string("not started: ") + kUnprovenLease);
}

std::optional<JobOutcome> Worker::Impl::RefuseUnproven(RunningJob& r) {
  if (r.stop.requested()) {
    r.started_mono = 0;
    return Failure(r, KindFor(r.stop.reason()), StopWhy(r.stop.reason()));
  }
  // A lost session lock (a cut connection, say) is most often back within
  // milliseconds, and the next heartbeat vouches for the job again: wait
  // for that rather than give the job up, as long as its lease lasts.
  const int64_t lease_bound = lease_guard_.FenceAt(r);
  while (!lease_guard_.SessionVouchesFor(r) && !r.stop.requested() && !threads_done_ &&
         clock_.MonotonicMs() < lease_bound) {
    SleepFor(Millis(10));
  }
  // A worker that has just woken from a freeze must not start a job whose
  // lease may already be someone else's (the watchdog may not have run).
  if (!LeaseProven(r)) return NotStarted(r);
  return std::nullopt;
}

JobOutcome Worker::Impl::Execute(RunningJob& r) {
  if (auto refused = RefuseUnproven(r)) return *std::move(refused);
  if (r.job.delivery == Delivery::kAtMostOnce) {
    auto marked = MarkStarted(r);
    // Either way an outcome must be recorded: this worker's heartbeats keep
    // extending the lease of every job it holds, so a job given up silently
    // would stay `running` for good.
    if (!marked.has_value()) {
      // Not started: reported lost without the mark, it is requeued uncharged.
      Log(LogLevel::kWarn, "job " + std::to_string(r.job.id) + ": could not record its start (" +
           marked.error().ToString() + "); not running it",
          r.job.id);
      return Failure(r, ErrorKind::kLost,
                     "not started: could not record its start: " + marked.error().ToString());
    }
    if (!*marked) {
      // Cancelled before it started, or fenced off (then this write is too).
      return Failure(r, ErrorKind::kCancelled, "cancelled before it started");
    }
    // Checked again: the worker may have been frozen while the mark was in
    // flight, and the store may have given the job away since (a started
    // at-most-once job is then `lost`, never run twice).
    if (auto refused = RefuseUnproven(r)) return *std::move(refused);
  }
  r.started_mono = clock_.MonotonicMs();
  if (Logs(LogLevel::kDebug)) {
    Log(LogLevel::kDebug, JobLabel(r) + ": starting", r.job.id, JobFields(r));
  }
  if (!r.job.command.empty()) return ExecuteCommand(r, r.job.command);
  if (auto it = opt_.task_commands.find(r.job.task); it != opt_.task_commands.end()) {
    return ExecuteCommand(r, it->second);
  }
  if (auto it = handlers_.find(r.job.task); it != handlers_.end()) {
    return ExecuteHandler(r, it->second);
  }
  return Failure(r, ErrorKind::kError, "no handler for task '" + r.job.task + "' on worker '" +
                                           opt_.name + "'");
}

JobOutcome Worker::Impl::ExecuteCommand(RunningJob& r,
                                                       const std::string& command) {
  SubprocessSpec spec;
  spec.command = command;
  spec.stdin_data = r.job.payload.dump();
  spec.timeout = r.job.timeout;
  spec.kill_grace = opt_.kill_grace;
  spec.start_by_mono_ms = LeaseProvenUntil(r);
  spec.shim_path = opt_.command_shim;
  spec.env = {
      {"WARDEN_JOB_ID", std::to_string(r.job.id)},
      {"WARDEN_TASK", r.job.task},
      {"WARDEN_QUEUE", r.job.queue},
      {"WARDEN_ATTEMPT", std::to_string(r.job.attempt)},
      {"WARDEN_LEASE_TOKEN", std::to_string(r.job.lease_token)},
      {"WARDEN_CHECKPOINT", r.job.checkpoint.is_null() ? "" : r.job.checkpoint.dump()},
      {"WARDEN_WORKER_ID", std::to_string(id_.load())},
  };

  CheckpointWriter checkpoints(
      env_, [this, ref = JobRef{r.job.id, r.job.lease_token}](const Json& checkpoint) {
        return claim_store_->JobCheckpoint(ref, checkpoint);
      },
      [&r] { r.stop.Request(StopReason::kFence); });
  Json explicit_result;
  bool has_result = false;
  std::string control_errors;
  auto note = [&](const std::string& text) {
    if (control_errors.size() < 4096) control_errors += text;
  };
  auto on_line = [&](const std::string& line) {
    // `checkpoint JSON` and `result JSON`, one per line on fd 3.
    const size_t space = line.find(' ');
    const std::string verb = line.substr(0, space);
    const std::string body = space == std::string::npos ? "" : line.substr(space + 1);
    if (verb != "checkpoint" && verb != "result") {
      note("warden: ignored control line (want `checkpoint JSON` or `result JSON`): " +
           OneLine(line, 200) + "\n");
      return;
    }
    // Strict: a value nested too deep would overflow the stack when stored.
    Result<Json> parsed = ParseJsonText(body);
    if (!parsed.has_value()) {
      note("warden: ignored " + verb + " line: its value " + parsed.error().message() + "\n");
      return;
    }
    Json value = std::move(*parsed);
    if (verb == "result") {
      explicit_result = std::move(value);
      has_result = true;
      return;
    }
    checkpoints.Submit(std::move(value));
  };
  SubprocessResult res = env_.RunSubprocess(spec, r.stop, on_line);
  note(checkpoints.Finish());
  // Kept with the attempt however it ends (in its stderr tail, or its note
  // when it succeeds), and said now.
  std::istringstream notes(control_errors);
  for (std::string line; std::getline(notes, line);) {
    if (!line.empty()) Log(LogLevel::kWarn, JobLabel(r) + ": " + line, r.job.id, JobFields(r));
  }

  // Checked by the job's own process just before exec: the worker was
  // frozen (or its heartbeats failed) between Execute's check and then.
  if (res.missed_start_deadline) return NotStarted(r);
  // We stopped it (cancel, fence, shutdown): that is the outcome whether our
  // signal killed it or it caught SIGTERM and exited non-zero by itself
  // (`trap 'cleanup; exit 143' TERM`); a job that still exits 0 finished.
  if (r.stop.requested() && res.stopped != StopReason::kNone && res.exit_code != 0) {
    JobOutcome o = Failure(r, KindFor(res.stopped), StopWhy(res.stopped));
    o.error.signal = res.signal;
    o.error.exit_code = res.exit_code;
    o.error.stderr_tail = res.stderr_tail + control_errors;
    o.error.stdout_tail = res.stdout_tail;
    return o;
  }
  if (!res.started) return Failure(r, ErrorKind::kError, "could not start: " + res.spawn_error);
  if (res.timed_out) {
    JobOutcome o = Failure(r, ErrorKind::kTimeout,
                           "ran past its timeout of " + FormatDuration(r.job.timeout));
    o.error.signal = res.signal;
    o.error.exit_code = res.exit_code;
    o.error.stderr_tail = res.stderr_tail + control_errors;
    o.error.stdout_tail = res.stdout_tail;
    return o;
  }
  if (res.exit_code == 0) {
    JobOutcome o;
    o.ref = JobRef{r.job.id, r.job.lease_token};
    o.success = true;
    o.note = control_errors;
    if (has_result) {
      o.result = std::move(explicit_result);
    } else if (!res.stdout_tail.empty()) {
      o.result = Json{{"stdout", res.stdout_tail}};
    }
    return o;
  }
  JobOutcome o;
  if (res.signal) {
    o = Failure(r, ErrorKind::kCrash,
                std::string("killed by signal ") + std::to_string(*res.signal) + " (" +
                    strsignal(*res.signal) + ")" +
                    (res.spawn_error.empty() ? "" : ": " + res.spawn_error));
    o.error.signal = res.signal;
  } else {
    o = Failure(r, ErrorKind::kError, "exited with status " + std::to_string(*res.exit_code));
    o.error.exit_code = res.exit_code;
  }
  o.error.stderr_tail = res.stderr_tail + control_errors;
  o.error.stdout_tail = res.stdout_tail;
  return o;
}

void Worker::Impl::LogOutcome(const RunningJob& r, const JobOutcome& o,
                              Completer::Tally& tally) {
  if (o.success || tally.run_ms < 0 || !Logs(LogLevel::kWarn)) return;
  const std::string took = FormatDuration(Millis(tally.run_ms));
  Json fields = JobFields(r);
  fields["outcome"] = ErrorKindName(o.error.kind);
  fields["duration_ms"] = tally.run_ms;
  if (o.error.exit_code) fields["exit_code"] = *o.error.exit_code;
  if (o.error.signal) fields["signal"] = *o.error.signal;
  std::string line = JobLabel(r) + ": " + ErrorKindName(o.error.kind) + " after " + took +
                     ": " + OneLine(o.error.message, 300);
  // The last line a failed command wrote to stderr is most often why
  // (a Python traceback ends with its exception).
  const std::string& tail = o.error.stderr_tail;
  const size_t end = tail.find_last_not_of("\n");
  if (end != std::string::npos) {
    const size_t begin = tail.rfind('\n', end);
    const size_t from = begin == std::string::npos ? 0 : begin + 1;
    line += " (stderr: " + OneLine(tail.substr(from, end + 1 - from), 200) + ")";
  }
  tally.failure_line = std::move(line);
  tally.failure_fields = std::move(fields);
}

void Worker::Impl::LogWritten(std::span<const Completer::Tally> tallies,
                              const std::vector<bool>& accepted) {
  for (size_t i = 0; i < tallies.size() && i < accepted.size(); ++i) {
    const Completer::Tally& t = tallies[i];
    if (t.run_ms < 0) continue;  // it did not run: nothing to say
    const bool failed = !t.failure_line.empty();
    if (accepted[i]) {
      if (failed) {
        Log(LogLevel::kWarn, t.failure_line, t.run->job.id, t.failure_fields);
      } else if (Logs(LogLevel::kInfo)) {
        Json fields = JobFields(*t.run);
        fields["outcome"] = "succeeded";
        fields["duration_ms"] = t.run_ms;
        Log(LogLevel::kInfo,
            JobLabel(*t.run) + ": succeeded in " + FormatDuration(Millis(t.run_ms)), t.run->job.id,
            std::move(fields));
      }
      continue;
    }
    if (!Logs(LogLevel::kWarn)) continue;
    // The job's code ran to its end, but the job had been recovered while
    // this worker was frozen or cut off: its outcome does not count, and
    // "succeeded" would say that it did.
    Json fields = failed ? t.failure_fields : JobFields(*t.run);
    fields["ran_as"] = failed ? fields.value("outcome", "") : "succeeded";
    fields["outcome"] = "fenced_off";
    fields["duration_ms"] = t.run_ms;
    const std::string what =
        failed ? t.failure_line
               : JobLabel(*t.run) + ": finished in " + FormatDuration(Millis(t.run_ms));
    Log(LogLevel::kWarn,
        what + "; its outcome was refused (fenced off): the job's lease had passed to another "
               "attempt while this worker was frozen or cut off, and that attempt's outcome "
               "counts",
        t.run->job.id, std::move(fields));
  }
}

JobOutcome Worker::Impl::ExecuteHandler(RunningJob& r, const Handler& handler) {
  HandlerContext ctx(r, *claim_store_, env_);
  // The last moment before the handler's code runs.
  if (auto refused = RefuseUnproven(r)) return *std::move(refused);
  Status s;
  try {
    s = handler(ctx);
  } catch (const std::exception& e) {
    s = Internal(std::string("handler threw: ") + e.what());
  } catch (...) {
    s = Internal("handler threw a non-standard exception");
  }
  ctx.FinishCheckpoints();
  if (r.timed_out) {
    return Failure(r, ErrorKind::kTimeout,
                   "ran past its timeout of " + FormatDuration(r.job.timeout));
  }
  if (r.stop.requested()) return Failure(r, KindFor(r.stop.reason()), StopWhy(r.stop.reason()));
  if (!s.ok()) return Failure(r, ErrorKind::kError, s.ToString());
  JobOutcome o;
  o.ref = JobRef{r.job.id, r.job.lease_token};
  o.success = true;
  o.result = std::move(ctx.result());
  return o;
}

}  // namespace warden
