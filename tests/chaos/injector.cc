#include "injector.h"

#include <fmt/core.h>
#include <signal.h>
#include <sqlite3.h>

#include <algorithm>

#include "warden/duration.h"
#include "ledger.h"
#include "poll_until.h"

namespace chaos {

using warden::testing::PollUntil;

Injector::Injector(const Options& o, Fleet& fleet, StoreTarget store,
                   std::vector<PlannedFault> plan, std::string dir, SayFn say)
    : o_(o),
      fleet_(fleet),
      store_(std::move(store)),
      plan_(std::move(plan)),
      dir_(std::move(dir)),
      say_(std::move(say)) {}

bool Injector::StoreFaultActive() const { return helper_ != nullptr; }

int Injector::DownCount() const {
  int down = 0;
  for (int s = 0; s < fleet_.slots(); ++s) {
    const bool cut =
        std::find(cut_slots_.begin(), cut_slots_.end(), s) != cut_slots_.end();
    if (!fleet_.Up(s) || fleet_.Frozen(s) || cut) ++down;
  }
  return down;
}

bool Injector::SqliteWritable() const {
  sqlite3* db = nullptr;
  bool ok = sqlite3_open_v2(store_.sqlite_path.c_str(), &db,
                            SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK;
  if (ok) sqlite3_busy_timeout(db, 300);
  ok = ok && sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) ==
                 SQLITE_OK;
  if (ok) sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  return ok;
}

void Injector::PollHelper() {
  if (!helper_) return;
  FaultRecord& r = records_[helper_record_];
  if (r.kind == FaultKind::kSqliteLock && r.start_ms < 0 &&
      helper_->Stamp("locked") >= 0) {
    r.start_ms = helper_->Stamp("locked");
    say_(fmt::format("sqlite-lock: another process holds the write lock for {}",
                     r.detail));
  }
  if (!helper_->Done()) return;
  if (r.kind == FaultKind::kSqliteLock) {
    r.start_ms = helper_->Stamp("locked");
    r.end_ms = helper_->Stamp("released") >= 0 ? helper_->Stamp("released")
                                               : helper_->ended_ms();
    r.skipped = r.start_ms < 0;
    if (r.skipped) r.detail = "never got the lock: " + helper_->Output();
    say_("sqlite-lock: released");
  } else {
    r.start_ms = helper_->started_ms();
    r.end_ms = helper_->ended_ms();
    if (helper_->exit_code() != 0) {
      r.detail = "restart failed (exit " +
                 std::to_string(helper_->exit_code()) +
                 "): " + helper_->Output();
    } else {
      r.detail = fmt::format("server back after {:.1f}s",
                             (r.end_ms - r.start_ms) / 1000.0);
    }
    say_("pg-restart: " + r.detail);
  }
  helper_.reset();
}

void Injector::Tick(int64_t window_start) {
  PollHelper();
  const int64_t now = WallMs();
  while (next_ < plan_.size() && window_start + plan_[next_].at_ms <= now) {
    Start(plan_[next_++]);
  }
  while (!deferred_.empty() && !helper_) {
    PlannedFault f = deferred_.front();
    deferred_.pop_front();
    Start(f);
  }
  for (auto it = thaws_.begin(); it != thaws_.end();) {
    if (it->at > WallMs()) {
      ++it;
      continue;
    }
    FaultRecord& r = records_[it->record];
    r.end_ms = fleet_.Thaw(it->slot);
    say_(fmt::format("SIGCONT {} after {:.1f}s frozen", r.target,
                     (r.end_ms - r.start_ms) / 1000.0));
    it = thaws_.erase(it);
  }
  for (auto it = respawns_.begin(); it != respawns_.end();) {
    if (it->at > WallMs()) {
      ++it;
      continue;
    }
    fleet_.Spawn(it->slot, it->new_name);
    say_(fmt::format("respawned slot {} as {} (pid {})", it->slot,
                     fleet_.Name(it->slot), fleet_.Pid(it->slot)));
    it = respawns_.erase(it);
  }
  if (heal_ && heal_->at <= WallMs()) EndPartition(heal_->record);
}

void Injector::Start(const PlannedFault& f) {
  FaultRecord r;
  r.kind = f.kind;
  r.planned_ms = f.at_ms;
  records_.push_back(r);
  FaultRecord& rec = records_.back();
  switch (f.kind) {
    case FaultKind::kKillWorker:
      KillWorker(f, rec);
      break;
    case FaultKind::kFreezeWorker:
    case FaultKind::kFreezeHost:
      if (!store_.sqlite_path.empty() && helper_) {
        // A freeze must not land inside a transaction, and none can be
        // told apart from the lock holder's: wait for the lock to go.
        records_.pop_back();
        deferred_.push_back(f);
        return;
      }
      FreezeWorker(f, rec, f.kind == FaultKind::kFreezeHost);
      break;
    case FaultKind::kKillJob:
      KillJob(f, rec);
      break;
    case FaultKind::kSqliteLock:
      rec.detail = warden::FormatDuration(Millis(f.duration_ms));
      helper_ = std::make_unique<AsyncCommand>(
          std::vector<std::string>{o_.lock_bin, store_.sqlite_path,
                                   std::to_string(f.duration_ms)},
          dir_, "lock-" + std::to_string(++seq_));
      helper_record_ = records_.size() - 1;
      break;
    case FaultKind::kPgRestart: {
      std::vector<std::string> argv;
      if (!store_.cluster_netns.empty()) {
        argv = {store_.ip_tool, "netns", "exec", store_.cluster_netns};
      }
      argv.insert(argv.end(),
                  {store_.cluster_script, "restart", store_.cluster_dir});
      helper_ = std::make_unique<AsyncCommand>(
          argv, dir_, "restart-" + std::to_string(++seq_));
      helper_record_ = records_.size() - 1;
      say_("pg-restart: restarting the server");
      break;
    }
    case FaultKind::kPgKillBackends: {
      int n = 0;
      rec.start_ms = WallMs();
      const std::string err =
          TerminateBackends(store_.pg_admin_url, store_.pg_db, &n);
      rec.end_ms = WallMs();
      rec.detail = err.empty() ? fmt::format("terminated {} sessions", n)
                               : "failed: " + err;
      rec.skipped = !err.empty();
      say_("pg-kill-backends: " + rec.detail);
      break;
    }
    case FaultKind::kPartition:
      StartPartition(f, rec);
      break;
  }
}

int Injector::PickRunningWorker(const PlannedFault& f, FaultRecord& r) {
  int slot = -1;
  for (int i = 0; i < fleet_.slots() && slot < 0; ++i) {
    const int s = (f.slot + i) % fleet_.slots();
    if (fleet_.Up(s) && !fleet_.Frozen(s)) slot = s;
  }
  if (slot < 0 || DownCount() >= std::max(1, fleet_.slots() / 2)) {
    r.skipped = true;
    r.detail = "too many workers down";
    return -1;
  }
  return slot;
}

void Injector::KillWorker(const PlannedFault& f, FaultRecord& r) {
  const int slot = PickRunningWorker(f, r);
  if (slot < 0) return;
  r.pids = {fleet_.Pid(slot)};
  r.target = fleet_.Name(slot);
  r.start_ms = r.end_ms = fleet_.Kill(slot);
  respawns_.push_back({r.start_ms + f.respawn_after_ms, slot, 0, f.new_name});
  r.detail = fmt::format("respawn after {}ms{}", f.respawn_after_ms,
                         f.new_name ? " under a new name" : "");
  say_(fmt::format("SIGKILL {} (pid {}); {}", r.target, r.pids[0], r.detail));
}

void Injector::FreezeWorker(const PlannedFault& f, FaultRecord& r, bool host) {
  const int slot = PickRunningWorker(f, r);
  if (slot < 0) return;
  std::function<bool()> check;
  if (!store_.sqlite_path.empty()) check = [this] { return SqliteWritable(); };
  r.pids = {fleet_.Pid(slot)};
  r.target = fleet_.Name(slot);
  r.start_ms = fleet_.Freeze(slot, host, check);
  if (r.start_ms < 0) {
    r.skipped = true;
    r.detail = "always caught inside a write transaction";
    say_(fmt::format("could not freeze {} outside a write transaction; skipped",
                     r.target));
    return;
  }
  r.frozen_execd = fleet_.FrozenExecd(slot);
  thaws_.push_back(
      {r.start_ms + f.duration_ms, slot, records_.size() - 1, false});
  r.detail =
      fmt::format("for {}", warden::FormatDuration(Millis(f.duration_ms)));
  say_(fmt::format("SIGSTOP {} (pid {}){} {}", r.target, r.pids[0],
                   host ? " and every process under it" : "", r.detail));
}

void Injector::KillJob(const PlannedFault& f, FaultRecord& r) {
  const std::vector<JobProcess> jobs = fleet_.JobProcesses();
  if (jobs.empty()) {
    r.skipped = true;
    r.detail = "no command job running";
    return;
  }
  const JobProcess& j = jobs[f.pick % jobs.size()];
  kill(-j.pid, SIGKILL);
  r.start_ms = r.end_ms = WallMs();
  r.job = j.job;
  r.pids = {j.worker_pid};
  r.target = fmt::format("job {} attempt {}", j.job, j.attempt);
  r.detail = fmt::format("process group {}", j.pid);
  say_(fmt::format("SIGKILL {} (process group {})", r.target, j.pid));
}

void Injector::StartPartition(const PlannedFault& f, FaultRecord& r) {
  if (heal_ || store_.network == nullptr) {
    r.skipped = true;
    r.detail = "a partition is already under way";
    return;
  }
  for (int s = 0; s < fleet_.slots(); ++s) {
    if (store_.side_of_slot.at(static_cast<size_t>(s)) != f.side) continue;
    cut_slots_.push_back(s);
    if (!fleet_.Up(s)) continue;
    r.pids.push_back(fleet_.Pid(s));
    r.target += (r.target.empty() ? "" : ",") + fleet_.Name(s);
  }
  const auto side = f.side == 0 ? pt::Network::kA : pt::Network::kB;
  const std::string err = store_.network->Cut(side);
  r.start_ms = WallMs();
  if (!err.empty()) {
    r.skipped = true;
    r.detail = "cut failed: " + err;
    cut_slots_.clear();
    return;
  }
  heal_ = Timed{r.start_ms + f.duration_ms, f.side, records_.size() - 1, false};
  r.detail = fmt::format("host {} cut off for {}", f.side == 0 ? "A" : "B",
                         warden::FormatDuration(Millis(f.duration_ms)));
  say_(fmt::format("partition: {} ({})", r.detail, r.target));
}

void Injector::EndPartition(size_t record) {
  FaultRecord& r = records_[record];
  const auto side = heal_->slot == 0 ? pt::Network::kA : pt::Network::kB;
  if (const std::string err = store_.network->Heal(side); !err.empty()) {
    r.detail += "; heal failed: " + err;
  }
  r.end_ms = WallMs();
  heal_.reset();
  cut_slots_.clear();
  say_("partition healed");
}

void Injector::CloseWindow() {
  // Faults under way run their planned course (a freeze cut short would
  // not outlast the lease); none starts any more.
  next_ = plan_.size();
  deferred_.clear();
  PollUntil(
      [&] {
        Tick(0);
        return !helper_ && thaws_.empty() && respawns_.empty() && !heal_;
      },
      Millis(180'000), Millis(10));
}

}  // namespace chaos
