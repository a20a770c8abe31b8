// MemoryStore: opening, inserting, and helpers the other memory_store_*.cc share.
#include "store/memory/memory_store.h"

#include "core/first_run.h"
#include "env/system_clock.h"
#include "warden/text.h"

namespace warden::memory {

Result<std::unique_ptr<Store>> MemoryStore::Open(const std::string& name, StoreOptions options) {
  if (name.empty()) {
    return InvalidArgument(
        "database URL 'memory:' names no database (memory:NAME: the stores of this process "
        "opened on one NAME share it)");
  }
  // database_clock first: a test that drives the database's time through it
  // (as on PostgreSQL) drives this store's.
  const Clock* clock = options.database_clock ? options.database_clock
                       : options.clock        ? options.clock
                                              : &SystemClock::Get();
  std::shared_ptr<Database> db = OpenDatabase(name, options.create_if_missing, options.jitter_seed,
                                              options.memory_session_proofs);
  if (!db) {
    // A command that only reads, from another process: it can never see
    // the database (and would find it empty if it made one).
    return NotFound("no in-memory database named '" + name +
                    "' is open in this process (a memory: database lives only inside the "
                    "process that opened it, while a store is open on it)");
  }
  return std::unique_ptr<Store>(new MemoryStore(std::move(db), clock));
}

Result<std::vector<EnqueueResult>> MemoryStore::JobInsertMany(std::span<const JobSpec> specs) {
  std::vector<EnqueueResult> out;
  out.reserve(specs.size());
  {
    MutexLock lock(db_->mu);
    Tables& t = db_->t;
    const TimeMs now = clock_->NowMs();
    for (const JobSpec& spec : specs) {
      // A live job with the same unique key (one inserted earlier in this
      // batch included) makes this one a no-op that returns its id.
      if (!spec.unique_key.empty()) {
        if (auto held = t.live_unique.find(spec.unique_key); held != t.live_unique.end()) {
          out.push_back(EnqueueResult{held->second, false});
          continue;
        }
      }
      JobRow row;
      row.id = ++t.last_job_id;
      row.queue = spec.queue;
      row.task = spec.task;
      row.command = spec.command;
      row.payload = JsonText(spec.payload);
      row.priority = spec.priority;
      row.state = FirstState(spec, now);
      row.run_at = FirstRunAt(spec, now);
      row.max_attempts = spec.max_attempts;
      row.max_crashes = spec.max_crashes;
      row.retry = spec.retry;
      row.delivery = spec.delivery;
      row.timeout_ms = spec.timeout.count();
      if (spec.lease) row.lease_ms = spec.lease->count();
      if (spec.start_deadline) row.start_deadline_at = row.run_at + spec.start_deadline->count();
      row.unique_key = spec.unique_key;
      row.concurrency_key = spec.concurrency_key;
      row.created_at = now;
      if (!row.unique_key.empty()) t.live_unique[row.unique_key] = row.id;  // a new job is live
      out.push_back(EnqueueResult{row.id, true});
      AddJobRow(t, std::move(row));
    }
  }
  // As SQLite wakes them after its commit: every insert, claimable or not.
  NotifyWorkers();
  return out;
}

JobRow* MemoryStore::FindRunningLocked(JobRef ref) {
  auto it = db_->t.jobs.find(ref.id);
  if (it == db_->t.jobs.end()) return nullptr;
  JobRow& job = it->second;
  if (job.lease_token != ref.lease_token || job.state != JobState::kRunning) return nullptr;
  return &job;
}

}  // namespace warden::memory
