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

void Injector::SetNodes(NodeAdmin* admin, std::vector<warden::NodeSpec> inventory) {
  admin_ = admin;
  inventory_ = std::move(inventory);
}

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
  if (!deferred_nodes_.empty() && !node_fault_) {
    PlannedFault f = deferred_nodes_.front();
    deferred_nodes_.pop_front();
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
  if (admin_ != nullptr) {
    for (const NodeAdmin::Done& d : admin_->TakeDone()) NodeChangeDone(d);
  }
  if (node_fault_ && node_fault_->phase == NodeFault::kClosed &&
      node_fault_->open_at <= WallMs()) {
    OpenNode();
  }
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
    case FaultKind::kNodeDisable:
    case FaultKind::kNodeRemove:
    case FaultKind::kNodeForceRemove:
    case FaultKind::kNodeResize:
      if (node_fault_) {
        // One at a time: a change slowed by a store fault can make one
        // outlast its plan. It waits for the one under way to end.
        records_.pop_back();
        deferred_nodes_.push_back(f);
        return;
      }
      StartNodeFault(f, rec);
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

namespace {

// The inventory less `node`.
std::vector<warden::NodeSpec> Without(const std::vector<warden::NodeSpec>& inventory,
                                      const std::string& node) {
  std::vector<warden::NodeSpec> out;
  for (const warden::NodeSpec& n : inventory) {
    if (n.name != node) out.push_back(n);
  }
  return out;
}

// Sets `spec`'s capacity (`warden nodes add NAME --capacity N`): a
// node-resize's change and its setting back.
NodeAdmin::Op SetCapacity(warden::NodeSpec spec) {
  return [spec](warden::Client& c, NodeAdmin::Outcome* out) -> warden::Status {
    auto put = c.AddNode(spec, /*set_capacity=*/true);
    if (!put.has_value()) return put.error();
    out->detail = fmt::format("capacity {}", spec.capacity.value_or(0));
    return warden::Status::Ok();
  };
}

}  // namespace

void Injector::StartNodeFault(const PlannedFault& f, FaultRecord& r) {
  if (admin_ == nullptr || inventory_.empty()) {
    r.skipped = true;
    r.detail = "no nodes";
    return;
  }
  const warden::NodeSpec spec =
      inventory_.at(static_cast<size_t>(f.node) % inventory_.size());
  r.node = spec.name;
  r.target = spec.name;
  NodeFault nf;
  nf.plan = f;
  nf.record = records_.size() - 1;
  nf.node = spec.name;
  // By a sync only when another node stays: an empty inventory is refused.
  const bool by_sync = f.by_sync && inventory_.size() > 1;
  const std::vector<warden::NodeSpec> rest = Without(inventory_, spec.name);
  NodeAdmin::Op close;
  int64_t give_up = 3000;
  if (f.kind == FaultKind::kNodeDisable) {
    close = [name = spec.name](warden::Client& c, NodeAdmin::Outcome* out) -> warden::Status {
      auto changed = c.SetNodeEnabled(name, false);
      if (!changed.has_value()) return changed.error();
      out->detail = *changed ? "disabled" : "was disabled already";
      return warden::Status::Ok();
    };
  } else if (f.kind == FaultKind::kNodeResize) {
    r.resized_to = f.capacity;
    r.target += fmt::format(" (capacity {} -> {})", spec.capacity.value_or(0), f.capacity);
    close = SetCapacity(warden::NodeSpec{spec.name, f.capacity});
  } else {
    const bool force = f.kind == FaultKind::kNodeForceRemove;
    if (force) {
      // The operator's word that the machine is gone: true here, its
      // workers are killed first (a live one's jobs would run twice).
      std::vector<int> mine;
      bool all_up = true;
      for (int s = 0; s < fleet_.slots(); ++s) {
        if (fleet_.Node(s) != spec.name) continue;
        mine.push_back(s);
        // Not frozen either: its thaw is due, and a freeze's record must
        // end with its thaw.
        all_up = all_up && fleet_.Up(s) && !fleet_.Frozen(s);
        for (const Timed& t : respawns_) all_up = all_up && t.slot != s;
      }
      int newly_down = 0;
      for (int s : mine) {
        const bool cut = std::find(cut_slots_.begin(), cut_slots_.end(), s) != cut_slots_.end();
        newly_down += !fleet_.Frozen(s) && !cut;
      }
      if (mine.empty() || !all_up ||
          DownCount() + newly_down > std::max(1, fleet_.slots() / 2)) {
        r.skipped = true;
        r.detail = mine.empty() ? "no worker on it"
                   : !all_up    ? "one of its workers is down or frozen already"
                                : "too many workers down";
        return;
      }
      for (int s : mine) {
        r.pids.push_back(fleet_.Pid(s));
        r.target += s == mine.front() ? " (" : ",";
        r.target += fleet_.Name(s);
        const int64_t at = fleet_.Kill(s);
        if (r.start_ms < 0) r.start_ms = at;
      }
      r.target += ")";
      r.end_ms = r.start_ms;
      nf.killed = mine;
      say_(fmt::format("SIGKILL every worker of {}: {}", spec.name, r.target));
      give_up = 0;  // its workers must come back: they do once this is done
    }
    if (by_sync) {
      close = [rest, force](warden::Client& c, NodeAdmin::Outcome* out) -> warden::Status {
        auto sync = c.SyncNodes(rest, /*dry_run=*/false, force, /*allow_empty=*/false);
        if (!sync.has_value()) return sync.error();
        out->detail = fmt::format("removed by a sync without it ({} removed{})",
                                  sync->report.removed.size(), force ? ", --force" : "");
        out->workers_released = sync->workers_released;
        out->jobs_recovered = sync->jobs_recovered;
        return warden::Status::Ok();
      };
    } else {
      close = [name = spec.name, force](warden::Client& c,
                                        NodeAdmin::Outcome* out) -> warden::Status {
        auto removal = c.RemoveNode(name, force);
        if (!removal.has_value()) return removal.error();
        out->detail = fmt::format("{}{}", removal->changed ? "removed" : "was removed already",
                                  force ? " (--force)" : "");
        out->workers_released = removal->workers_released;
        out->jobs_recovered = removal->jobs_recovered;
        return warden::Status::Ok();
      };
    }
  }
  r.close_sent = WallMs();
  nf.ticket = admin_->Post(close, give_up);
  node_fault_ = nf;
}

void Injector::NodeChangeDone(const NodeAdmin::Done& d) {
  if (!node_fault_ || d.ticket != node_fault_->ticket) return;
  NodeFault& nf = *node_fault_;
  FaultRecord& r = records_[nf.record];
  const auto took = [&] {
    return d.tries > 1 ? fmt::format(" ({} tries, {} ms)", d.tries, d.done_ms - d.sent_ms)
                       : std::string();
  };
  const bool resize = nf.plan.kind == FaultKind::kNodeResize;
  if (nf.phase == NodeFault::kClosing) {
    const bool force = nf.plan.kind == FaultKind::kNodeForceRemove;
    if (resize) {
      r.resize_sent = d.sent_ms;
      r.resize_done = d.done_ms;
      r.resize_failed = !d.ok;
    }
    if (d.ok) {
      if (ClosesNode(nf.plan.kind)) r.closed_from = d.done_ms;
      if (!force) r.start_ms = d.done_ms;
      r.detail = d.detail + took();
      if (force) {
        r.workers_released = d.outcome.workers_released;
        r.jobs_recovered = d.outcome.jobs_recovered;
        r.detail += r.workers_released == 0
                        ? std::string(": no live worker to release (their deaths proven first)")
                        : fmt::format(": {} live workers released, {} jobs recovered at once",
                                      r.workers_released, r.jobs_recovered);
      }
    } else {
      // Its outcome may still be unknown (a lost commit): it is undone
      // all the same.
      r.skipped = !force;
      r.detail = "the change failed: " + d.detail + took();
    }
    say_(fmt::format("{} {}: {}", FaultName(nf.plan.kind), nf.node, r.detail));
    nf.phase = NodeFault::kClosed;
    nf.open_at = d.ok ? d.done_ms + nf.plan.duration_ms : WallMs();
    for (int s : nf.killed) {
      // Only now: a worker registered before a forced removal committed
      // would be released alive.
      respawns_.push_back({std::max(r.start_ms + nf.plan.respawn_after_ms, d.done_ms), s, 0,
                           nf.plan.new_name});
    }
    return;
  }
  if (resize) {
    r.restore_sent = d.sent_ms;
    r.restore_done = d.ok ? d.done_ms : -1;
  }
  if (d.ok) {
    r.end_ms = d.done_ms;
    r.detail += "; back: " + d.detail + took();
    say_(fmt::format("{} {}: back ({})", FaultName(nf.plan.kind), nf.node, d.detail));
  } else {
    r.end_ms = d.done_ms;
    r.detail += "; NOT BACK: " + d.detail;
    say_(fmt::format("{} {}: could not bring it back: {}", FaultName(nf.plan.kind), nf.node,
                     d.detail));
  }
  node_fault_.reset();
}

void Injector::OpenNode() {
  NodeFault& nf = *node_fault_;
  FaultRecord& r = records_[nf.record];
  const warden::NodeSpec spec =
      inventory_.at(static_cast<size_t>(nf.plan.node) % inventory_.size());
  NodeAdmin::Op open;
  if (nf.plan.kind == FaultKind::kNodeDisable) {
    open = [name = spec.name](warden::Client& c, NodeAdmin::Outcome* out) -> warden::Status {
      auto changed = c.SetNodeEnabled(name, true);
      if (!changed.has_value()) return changed.error();
      out->detail = *changed ? "enabled" : "was enabled already";
      return warden::Status::Ok();
    };
  } else if (nf.plan.kind == FaultKind::kNodeResize) {
    open = SetCapacity(spec);
  } else if ((nf.plan.pick & 1) != 0 && inventory_.size() > 1) {
    open = [inventory = inventory_](warden::Client& c, NodeAdmin::Outcome* out) -> warden::Status {
      auto sync = c.SyncNodes(inventory, /*dry_run=*/false, /*force=*/false,
                              /*allow_empty=*/false);
      if (!sync.has_value()) return sync.error();
      out->detail = fmt::format("a sync listing it ({} revived)", sync->report.revived.size());
      return warden::Status::Ok();
    };
  } else {
    open = [spec](warden::Client& c, NodeAdmin::Outcome* out) -> warden::Status {
      auto added = c.AddNode(spec, /*set_capacity=*/true);
      if (!added.has_value()) return added.error();
      out->detail = *added ? "added" : "was present already";
      return warden::Status::Ok();
    };
  }
  // Not committed before this: the node took no work until now.
  if (r.closed_from >= 0) r.closed_until = WallMs();
  nf.phase = NodeFault::kOpening;
  nf.ticket = admin_->Post(open, 0);
}

void Injector::CloseWindow() {
  // Faults under way run their planned course (a freeze cut short would
  // not outlast the lease); none starts any more.
  next_ = plan_.size();
  deferred_.clear();
  deferred_nodes_.clear();
  PollUntil(
      [&] {
        Tick(0);
        return !helper_ && thaws_.empty() && respawns_.empty() && !heal_ && !node_fault_;
      },
      Millis(180'000), Millis(10));
}

}  // namespace chaos
