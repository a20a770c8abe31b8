// SqliteStore: the node registry (warden/nodes.h). The claim's side is
// ApplyNodeLocked, called from FlowLocked (sqlite_store_claim.cc).
#include <string>
#include <vector>

#include "core/node_sync.h"
#include "store/claim_flow.h"
#include "store/node_listing.h"
#include "store/sqlite/sqlite_store.h"

namespace warden::sqlite {
namespace {

const char* const kUpsertNodeSql =
    "INSERT INTO nodes (name, present, enabled, capacity, updated_at) VALUES (?1, 1, 1, ?2, ?3) "
    "ON CONFLICT (name) DO UPDATE SET present = 1, removed_at = NULL, capacity = ?2, "
    "updated_at = ?3";

}  // namespace

Result<std::vector<NodeInfo>> SqliteStore::RegistryLocked() {
  WARDEN_ASSIGN_OR_RETURN(
      Stmt q, db_->Prepare("SELECT name, present, enabled, capacity, updated_at, removed_at FROM "
                           "nodes ORDER BY name"));
  std::vector<NodeInfo> nodes;
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    NodeInfo n;
    n.name = q.Text(0);
    n.present = q.Bool(1);
    n.enabled = q.Bool(2);
    n.capacity = q.OptInt(3);
    n.updated_at = q.Int(4);
    n.removed_at = q.OptInt(5);
    nodes.push_back(std::move(n));
  }
  q.Reset();
  return nodes;
}

Result<std::vector<NodeInfo>> SqliteStore::NodeList() {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(std::vector<NodeInfo> registry, RegistryLocked());
  NodeListing nodes(std::move(registry));
  WARDEN_ASSIGN_OR_RETURN(
      Stmt live, db_->Prepare("SELECT node, count(*) FROM workers WHERE state IN ('active', "
                              "'draining') AND concurrency > 0 GROUP BY node"));
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, live.Step());
    if (!row) break;
    nodes.AddLiveWorkers(live.Text(0), live.Int(1));
  }
  live.Reset();
  WARDEN_ASSIGN_OR_RETURN(
      Stmt running, db_->Prepare("SELECT w.node, count(*) FROM jobs j JOIN workers w ON w.id = "
                                 "j.worker_id WHERE j.state = 'running' GROUP BY w.node"));
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, running.Step());
    if (!row) break;
    nodes.AddRunning(running.Text(0), running.Int(1));
  }
  running.Reset();
  return nodes.Take();
}

Status SqliteStore::ApplyNodeLocked(const NodeRow& node, ClaimFlow* flow) {
  int64_t running = 0;
  if (node.takes_work && node.capacity) {
    WARDEN_ASSIGN_OR_RETURN(
        Stmt c, db_->Prepare("SELECT count(*) FROM workers w JOIN jobs j ON j.worker_id = w.id "
                             "AND j.state = 'running' WHERE w.node = ?"));
    WARDEN_ASSIGN_OR_RETURN(bool counted, c.Bind(1, node.name).Step());
    running = counted ? c.Int(0) : 0;
    c.Reset();
  }
  ApplyNode(true, node.takes_work, node.capacity, running, flow);
  return Status::Ok();
}

Result<bool> SqliteStore::NodePut(const NodeSpec& node, bool set_capacity,
                                  const AuditEntry& audit) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  const TimeMs now = clock_->NowMs();
  WARDEN_ASSIGN_OR_RETURN(Stmt old,
                          db_->Prepare("SELECT present, capacity FROM nodes WHERE name = ?"));
  WARDEN_ASSIGN_OR_RETURN(bool known, old.Bind(1, node.name).Step());
  const bool was_present = known && old.Bool(0);
  const std::optional<int64_t> old_capacity = known ? old.OptInt(1) : std::nullopt;
  old.Reset();
  const std::optional<int64_t> capacity = set_capacity ? node.capacity : old_capacity;
  const bool changed = !was_present || capacity != old_capacity;
  if (changed) {
    WARDEN_ASSIGN_OR_RETURN(Stmt put, db_->Prepare(kUpsertNodeSql));
    WARDEN_RETURN_IF_ERROR(put.Bind(1, node.name).Bind(2, capacity).Bind(3, now).Exec().status());
  }
  AuditEntry entry = audit;
  entry.count = changed ? 1 : 0;
  WARDEN_RETURN_IF_ERROR(AuditLocked(entry, now));
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  if (changed) NotifyWorkers();  // room on a node may let its workers claim
  return changed;
}

Result<bool> SqliteStore::NodeSetEnabled(const std::string& name, bool enabled,
                                         const AuditEntry& audit) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  const TimeMs now = clock_->NowMs();
  WARDEN_ASSIGN_OR_RETURN(
      Stmt put, db_->Prepare("INSERT INTO nodes (name, present, enabled, updated_at) VALUES (?1, "
                             "1, ?2, ?3) ON CONFLICT (name) DO UPDATE SET enabled = ?2, "
                             "updated_at = ?3 WHERE enabled <> ?2"));
  WARDEN_ASSIGN_OR_RETURN(int changes,
                          put.Bind(1, name).Bind(2, enabled ? 1 : 0).Bind(3, now).Exec());
  AuditEntry entry = audit;
  entry.count = changes > 0 ? 1 : 0;
  WARDEN_RETURN_IF_ERROR(AuditLocked(entry, now));
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  if (changes > 0) NotifyWorkers();
  return changes > 0;
}

Result<bool> SqliteStore::NodeRemove(const std::string& name, const AuditEntry& audit) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  const TimeMs now = clock_->NowMs();
  WARDEN_ASSIGN_OR_RETURN(Stmt known, db_->Prepare("SELECT present FROM nodes WHERE name = ?"));
  WARDEN_ASSIGN_OR_RETURN(bool row, known.Bind(1, name).Step());
  const bool present = row && known.Bool(0);
  known.Reset();
  if (!row) return NotFound("node '" + name + "' is not registered");
  if (present) {
    WARDEN_ASSIGN_OR_RETURN(
        Stmt del, db_->Prepare("UPDATE nodes SET present = 0, removed_at = ?2, updated_at = ?2 "
                               "WHERE name = ?1"));
    WARDEN_RETURN_IF_ERROR(del.Bind(1, name).Bind(2, now).Exec().status());
  }
  AuditEntry entry = audit;
  entry.count = present ? 1 : 0;
  WARDEN_RETURN_IF_ERROR(AuditLocked(entry, now));
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return present;
}

Result<NodeSyncReport> SqliteStore::NodeSync(std::span<const NodeSpec> inventory, bool dry_run,
                                             const AuditEntry& audit) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  const TimeMs now = clock_->NowMs();
  WARDEN_ASSIGN_OR_RETURN(std::vector<NodeInfo> registry, RegistryLocked());
  NodeSyncPlan plan = PlanNodeSync(registry, inventory);
  if (dry_run) return plan.report;  // the transaction rolls back
  for (const NodeSpec& n : plan.upserts) {
    WARDEN_ASSIGN_OR_RETURN(Stmt put, db_->Prepare(kUpsertNodeSql));
    WARDEN_RETURN_IF_ERROR(put.Bind(1, n.name).Bind(2, n.capacity).Bind(3, now).Exec().status());
  }
  for (const std::string& name : plan.removals) {
    WARDEN_ASSIGN_OR_RETURN(
        Stmt del, db_->Prepare("UPDATE nodes SET present = 0, removed_at = ?2, updated_at = ?2 "
                               "WHERE name = ?1"));
    WARDEN_RETURN_IF_ERROR(del.Bind(1, name).Bind(2, now).Exec().status());
  }
  AuditEntry entry = audit;
  entry.count = static_cast<int64_t>(plan.upserts.size() + plan.removals.size());
  WARDEN_RETURN_IF_ERROR(AuditLocked(entry, now));
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  if (plan.report.Changed()) NotifyWorkers();
  return plan.report;
}

}  // namespace warden::sqlite
