#include "runtime/completer.h"

#include <algorithm>
#include <vector>

#include "core/held_bound.h"
#include "warden/plural.h"

namespace warden {
namespace {
constexpr size_t kMaxBatch = kCompleterMaxBatch;
}

Completer::Completer(Store& store, Env& env, Millis window, Callbacks callbacks)
    : store_(store), env_(env), clock_(env.clock()), window_(window), cb_(std::move(callbacks)) {
  thread_ = env_.StartThread([this] { Loop(); });
}

Completer::~Completer() { Stop(); }

void Completer::Add(JobOutcome outcome, Millis give_up_after, bool keyed, Tally tally) {
  bool wake;
  {
    MutexLock lock(mu_);
    pending_.push_back(Item{std::move(outcome), clock_.MonotonicMs() + give_up_after.count(),
                            keyed, std::move(tally)});
    ++added_;
    ++unsettled_[pending_.back().outcome.ref.id];
    // Only these two change what the writer waits for (work, a full batch).
    // Waking it on every Add cost a futex wake per job, 512 per batch.
    wake = pending_.size() == 1 || pending_.size() == kMaxBatch;
  }
  if (wake) cv_.NotifyAll();
}

void Completer::CollectUnsettled(std::unordered_set<JobId>& ids) {
  MutexLock lock(mu_);
  for (const auto& [id, count] : unsettled_) ids.insert(id);
}

void Completer::SettleLocked(const Item& item) {
  ++settled_;
  auto it = unsettled_.find(item.outcome.ref.id);
  if (it != unsettled_.end() && --it->second == 0) unsettled_.erase(it);
}

void Completer::Flush() {
  UniqueMutexLock lock(mu_);
  const int64_t target = added_;
  cv_.NotifyAll();
  cv_.Wait(lock, [&]() REQUIRES(mu_) { return settled_ >= target; });
}

bool Completer::idle() {
  MutexLock lock(mu_);
  return settled_ == added_;
}

int64_t Completer::Unsettled() {
  MutexLock lock(mu_);
  return added_ - settled_;
}

void Completer::Stop() {
  if (!thread_) return;
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
  thread_->Join();
  thread_.reset();
}

void Completer::Loop() {
  Millis backoff(10);
  // Failed writes since the last one that worked: the first is logged, the
  // retries are not (one line a second per batch buried the log), and the
  // recovery is.
  int failed_tries = 0;
  UniqueMutexLock lock(mu_);
  while (true) {
    cv_.Wait(lock, [&]() REQUIRES(mu_) { return stop_ || !pending_.empty(); });
    if (pending_.empty()) {
      if (stop_) return;
      continue;
    }
    // Let a batch gather, unless it is already large or we are stopping.
    if (!stop_ && pending_.size() < kMaxBatch && window_.count() > 0) {
      cv_.WaitFor(lock, window_,
                  [&]() REQUIRES(mu_) { return stop_ || pending_.size() >= kMaxBatch; });
    }
    const size_t n = std::min(pending_.size(), kMaxBatch);
    std::vector<Item> batch(std::make_move_iterator(pending_.begin()),
                            std::make_move_iterator(pending_.begin() + n));
    pending_.erase(pending_.begin(), pending_.begin() + n);
    lock.Unlock();

    // Lent to the store and moved back: a copy per outcome (its result,
    // its error's tails) cost the writer thread more than the move.
    std::vector<JobOutcome> outcomes;
    outcomes.reserve(batch.size());
    for (Item& i : batch) outcomes.push_back(std::move(i.outcome));
    auto r = store_.JobFinishMany(cb_.worker_id(), outcomes);
    for (size_t i = 0; i < batch.size(); ++i) batch[i].outcome = std::move(outcomes[i]);

    lock.Lock();
    if (r.has_value()) {
      backoff = Millis(10);
      if (failed_tries > 0 && cb_.log) {
        cb_.log(0, "recording outcomes works again (after " + std::to_string(failed_tries) +
                " failed tries)");
      }
      failed_tries = 0;
      int accepted = 0;
      bool keyed = false;
      for (size_t i = 0; i < batch.size(); ++i) {
        if ((*r)[i]) {
          ++accepted;
          keyed = keyed || batch[i].keyed;
        }
      }
      for (const Item& item : batch) SettleLocked(item);
      lock.Unlock();
      if (cb_.on_written) {
        std::vector<Tally> tallies;
        tallies.reserve(batch.size());
        for (Item& item : batch) tallies.push_back(std::move(item.tally));
        cb_.on_written(tallies, *r);
      }
      if (cb_.on_batch) cb_.on_batch(accepted, static_cast<int>(batch.size()) - accepted, keyed);
      lock.Lock();
      cv_.NotifyAll();
      continue;
    }
    if (!r.error().transient()) {
      lock.Unlock();
      WriteOneByOne(std::move(batch), r.error());
      lock.Lock();
      cv_.NotifyAll();
      continue;
    }
    // The write failed as a whole: keep what may still matter, in order.
    // While the worker runs, its heartbeats keep extending the leases of
    // these jobs, so no sweeper would ever recover a dropped one: it would
    // stay `running` for good. Retry transient failures until the worker
    // stops (a lease taken over meanwhile only means the write is fenced).
    const int64_t now = clock_.MonotonicMs();
    int dropped = 0;
    for (auto it = batch.rbegin(); it != batch.rend(); ++it) {
      if (r.error().transient() && (!stop_ || it->give_up_at_mono > now)) {
        pending_.push_front(std::move(*it));
      } else {
        ++dropped;
        SettleLocked(*it);
      }
    }
    lock.Unlock();
    if (cb_.log && (++failed_tries == 1 || dropped > 0)) {
      cb_.log(0, "recording outcomes failed (" +
              Plural(static_cast<int64_t>(batch.size()), "outcome") + "): " + r.error().ToString() +
              (dropped ? "; dropped " + std::to_string(dropped) +
                             " (their leases will expire and the jobs be recovered)"
                       : "; retrying"));
    }
    clock_.SleepFor(backoff);
    backoff = std::min(backoff * 2, Millis(1000));
    lock.Lock();
    cv_.NotifyAll();
  }
}

void Completer::WriteOneByOne(std::vector<Item> batch, const Status& why) {
  // Something in the batch cannot be written (say, a result the store
  // refuses). Find it; a success whose result cannot be stored is recorded
  // as a failure rather than left `running` under a lease the heartbeats keep
  // extending. Only what cannot be written at all is dropped, loudly.
  if (cb_.log) {
    cb_.log(0, "recording a batch failed (" + why.ToString() + "); writing one by one");
  }
  int accepted = 0, fenced = 0;
  bool keyed = false;
  for (Item& item : batch) {
    for (int tries = 0; tries < 2; ++tries) {
      auto r = store_.JobFinishMany(cb_.worker_id(), std::span(&item.outcome, 1));
      if (r.has_value()) {
        ((*r)[0] ? accepted : fenced)++;
        keyed = keyed || ((*r)[0] && item.keyed);
        if (cb_.on_written) cb_.on_written(std::span(&item.tally, 1), *r);
        break;
      }
      if (tries == 0 && item.outcome.success) {
        item.outcome.success = false;
        item.outcome.result = Json();
        item.outcome.error.kind = ErrorKind::kError;
        item.outcome.error.message = "succeeded, but its result could not be stored: " +
                                     r.error().ToString();
        continue;
      }
      if (cb_.log) {
        cb_.log(item.outcome.ref.id,
                "could not record the outcome of job " + std::to_string(item.outcome.ref.id) +
                ": " + r.error().ToString() + "; dropped");
      }
      break;
    }
  }
  {
    MutexLock lock(mu_);
    for (const Item& item : batch) SettleLocked(item);
  }
  if (cb_.on_batch) cb_.on_batch(accepted, fenced, keyed);
}

}  // namespace warden
