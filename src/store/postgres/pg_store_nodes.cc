// PgStore: the node registry (warden/nodes.h). The claim's side is in
// pg_store_claim.cc (ClaimInTransactionLocked locks the claiming worker's
// node row; the one-statement claim leaves such claims to it).
#include <string>
#include <vector>

#include "core/node_sync.h"
#include "store/node_listing.h"
#include "store/postgres/pg_store.h"

namespace warden::pg {
namespace {

const char* const kUpsertNodesSql =
    "INSERT INTO warden.nodes AS n (name, present, enabled, capacity, updated_at) SELECT u.name, "
    "true, true, u.capacity, $3::bigint FROM unnest($1::text[], $2::bigint[]) AS u(name, "
    "capacity) ON CONFLICT (name) DO UPDATE SET present = true, removed_at = NULL, capacity = "
    "excluded.capacity, updated_at = excluded.updated_at";

const char* const kRemoveNodesSql =
    "UPDATE warden.nodes SET present = false, removed_at = $2::bigint, updated_at = $2::bigint "
    "WHERE name = ANY($1::text[]) AND present";

// Capacities as a bigint[] parameter: NULL for none.
std::vector<std::optional<int64_t>> Capacities(const std::vector<NodeSpec>& nodes) {
  std::vector<std::optional<int64_t>> out;
  for (const NodeSpec& n : nodes) out.push_back(n.capacity);
  return out;
}

std::string BigintArray(const std::vector<std::optional<int64_t>>& values) {
  std::string text = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) text += ',';
    text += values[i] ? std::to_string(*values[i]) : "NULL";
  }
  return text + "}";
}

std::vector<std::string> Names(const std::vector<NodeSpec>& nodes) {
  std::vector<std::string> out;
  for (const NodeSpec& n : nodes) out.push_back(n.name);
  return out;
}

}  // namespace

Result<std::vector<NodeInfo>> PgStore::RegistryLocked(bool for_update) {
  WARDEN_ASSIGN_OR_RETURN(
      Rows r, conn_->Exec(std::string("SELECT name, present, enabled, capacity, updated_at, "
                                      "removed_at FROM warden.nodes ORDER BY name") +
                          (for_update ? " FOR UPDATE" : "")));
  std::vector<NodeInfo> nodes;
  for (int i = 0; i < r.size(); ++i) {
    NodeInfo n;
    n.name = r.Text(i, 0);
    n.present = r.Bool(i, 1);
    n.enabled = r.Bool(i, 2);
    n.capacity = r.OptInt(i, 3);
    n.updated_at = r.Int(i, 4);
    n.removed_at = r.OptInt(i, 5);
    nodes.push_back(std::move(n));
  }
  return nodes;
}

Result<std::vector<NodeInfo>> PgStore::NodeList() {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, Tx::Begin(*conn_));  // one snapshot for the three reads
  WARDEN_ASSIGN_OR_RETURN(std::vector<NodeInfo> registry, RegistryLocked(false));
  NodeListing nodes(std::move(registry));
  WARDEN_ASSIGN_OR_RETURN(
      Rows live, conn_->Exec("SELECT node, count(*) FROM warden.workers WHERE state IN "
                             "('active', 'draining') AND concurrency > 0 GROUP BY node"));
  for (int i = 0; i < live.size(); ++i) nodes.AddLiveWorkers(live.Text(i, 0), live.Int(i, 1));
  WARDEN_ASSIGN_OR_RETURN(
      Rows running, conn_->Exec("SELECT w.node, count(*) FROM warden.jobs j JOIN warden.workers "
                                "w ON w.id = j.worker_id WHERE j.state = 'running' GROUP BY "
                                "w.node"));
  for (int i = 0; i < running.size(); ++i) nodes.AddRunning(running.Text(i, 0), running.Int(i, 1));
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return nodes.Take();
}

Result<bool> PgStore::NodePut(const NodeSpec& node, bool set_capacity, const AuditEntry& audit) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, Tx::Begin(*conn_));
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  // Locked as a claim locks it: a change waits for the claims under way.
  WARDEN_ASSIGN_OR_RETURN(
      Rows old, conn_->Exec("SELECT present, capacity FROM warden.nodes WHERE name = $1 FOR "
                            "UPDATE",
                            Params().Add(node.name)));
  const bool was_present = !old.empty() && old.Bool(0, 0);
  const std::optional<int64_t> old_capacity = old.empty() ? std::nullopt : old.OptInt(0, 1);
  const std::optional<int64_t> capacity = set_capacity ? node.capacity : old_capacity;
  const bool changed = !was_present || capacity != old_capacity;
  if (changed) {
    WARDEN_RETURN_IF_ERROR(conn_
                               ->Exec(kUpsertNodesSql, Params()
                                                           .AddArray(std::vector{node.name})
                                                           .Add(BigintArray({capacity}))
                                                           .Add(now))
                               .status());
    WARDEN_RETURN_IF_ERROR(conn_->Exec("SELECT pg_notify('warden_jobs', '')").status());
  }
  AuditEntry entry = audit;
  entry.count = changed ? 1 : 0;
  WARDEN_RETURN_IF_ERROR(AuditLocked(entry, now));
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return changed;
}

Result<bool> PgStore::NodeSetEnabled(const std::string& name, bool enabled,
                                     const AuditEntry& audit) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, Tx::Begin(*conn_));
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  WARDEN_ASSIGN_OR_RETURN(
      Rows changed,
      conn_->Exec("INSERT INTO warden.nodes AS n (name, present, enabled, updated_at) VALUES "
                  "($1, true, $2::boolean, $3::bigint) ON CONFLICT (name) DO UPDATE SET enabled "
                  "= excluded.enabled, updated_at = excluded.updated_at WHERE n.enabled <> "
                  "excluded.enabled RETURNING 1",
                  Params().Add(name).Add(enabled).Add(now)));
  if (!changed.empty()) {
    WARDEN_RETURN_IF_ERROR(conn_->Exec("SELECT pg_notify('warden_jobs', '')").status());
  }
  AuditEntry entry = audit;
  entry.count = changed.empty() ? 0 : 1;
  WARDEN_RETURN_IF_ERROR(AuditLocked(entry, now));
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return !changed.empty();
}

Result<bool> PgStore::NodeRemove(const std::string& name, const AuditEntry& audit) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, Tx::Begin(*conn_));
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  WARDEN_ASSIGN_OR_RETURN(
      Rows known, conn_->Exec("SELECT present FROM warden.nodes WHERE name = $1 FOR UPDATE",
                              Params().Add(name)));
  if (known.empty()) return NotFound("node '" + name + "' is not registered");
  const bool present = known.Bool(0, 0);
  if (present) {
    WARDEN_RETURN_IF_ERROR(
        conn_->Exec(kRemoveNodesSql, Params().AddArray(std::vector{name}).Add(now)).status());
  }
  AuditEntry entry = audit;
  entry.count = present ? 1 : 0;
  WARDEN_RETURN_IF_ERROR(AuditLocked(entry, now));
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return present;
}

Result<NodeSyncReport> PgStore::NodeSync(std::span<const NodeSpec> inventory, bool dry_run,
                                         const AuditEntry& audit) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, Tx::Begin(*conn_));
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  // Every row locked, in name order: a claim that counts a node's capacity
  // holds its row, so a sync waits for it. (A node new to two syncs at once
  // is inserted by both: the upsert tolerates it.)
  WARDEN_ASSIGN_OR_RETURN(std::vector<NodeInfo> registry, RegistryLocked(!dry_run));
  NodeSyncPlan plan = PlanNodeSync(registry, inventory);
  if (dry_run) return plan.report;  // rolled back
  if (!plan.upserts.empty()) {
    WARDEN_RETURN_IF_ERROR(conn_
                               ->Exec(kUpsertNodesSql, Params()
                                                           .AddArray(Names(plan.upserts))
                                                           .Add(BigintArray(
                                                               Capacities(plan.upserts)))
                                                           .Add(now))
                               .status());
  }
  if (!plan.removals.empty()) {
    WARDEN_RETURN_IF_ERROR(
        conn_->Exec(kRemoveNodesSql, Params().AddArray(plan.removals).Add(now)).status());
  }
  if (plan.report.Changed()) {
    WARDEN_RETURN_IF_ERROR(conn_->Exec("SELECT pg_notify('warden_jobs', '')").status());
  }
  AuditEntry entry = audit;
  entry.count = static_cast<int64_t>(plan.upserts.size() + plan.removals.size());
  WARDEN_RETURN_IF_ERROR(AuditLocked(entry, now));
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return plan.report;
}

}  // namespace warden::pg
