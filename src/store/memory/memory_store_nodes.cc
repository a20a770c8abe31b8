// MemoryStore: the node registry (warden/nodes.h), as SqliteStore has it.
#include <string>
#include <vector>

#include "core/node_sync.h"
#include "store/claim_flow.h"
#include "store/memory/memory_store.h"
#include "store/node_listing.h"

namespace warden::memory {
namespace {

void Upsert(Tables& t, const NodeSpec& spec, TimeMs now) {
  NodeInfo& n = t.nodes[spec.name];
  const bool added = n.name.empty();
  n.name = spec.name;
  n.registered = true;
  n.present = true;
  if (added) n.enabled = true;
  n.capacity = spec.capacity;
  n.updated_at = now;
  n.removed_at.reset();
}

void MarkRemoved(NodeInfo& n, TimeMs now) {
  n.present = false;
  n.removed_at = now;
  n.updated_at = now;
}

}  // namespace

void MemoryStore::NodeOfClaimLocked(WorkerId worker, ClaimFlow* flow) {
  Tables& t = db_->t;
  auto w = t.workers.find(worker);
  if (w == t.workers.end()) return;
  auto node = t.nodes.find(w->second.node);
  if (node == t.nodes.end()) return;
  int64_t running = 0;
  if (node->second.capacity) {
    for (const auto& [id, job] : t.jobs) {
      if (job.state != JobState::kRunning || !job.worker_id) continue;
      auto holder = t.workers.find(*job.worker_id);
      if (holder != t.workers.end() && holder->second.node == node->first) ++running;
    }
  }
  ApplyNode(true, node->second.TakesWork(), node->second.capacity, running, flow);
}

Result<std::vector<NodeInfo>> MemoryStore::NodeList() {
  MutexLock lock(db_->mu);
  Tables& t = db_->t;
  std::vector<NodeInfo> registry;
  for (const auto& [name, n] : t.nodes) registry.push_back(n);
  NodeListing nodes(std::move(registry));
  for (const auto& [id, w] : t.workers) {
    if (IsLive(w.state) && w.concurrency > 0) nodes.AddLiveWorkers(w.node, 1);
  }
  for (const auto& [id, job] : t.jobs) {
    if (job.state != JobState::kRunning || !job.worker_id) continue;
    auto holder = t.workers.find(*job.worker_id);
    if (holder != t.workers.end()) nodes.AddRunning(holder->second.node, 1);
  }
  return nodes.Take();
}

Result<bool> MemoryStore::NodePut(const NodeSpec& spec, bool set_capacity,
                                  const AuditEntry& audit) {
  MutexLock lock(db_->mu);
  Tables& t = db_->t;
  const TimeMs now = clock_->NowMs();
  auto it = t.nodes.find(spec.name);
  const bool known = it != t.nodes.end();
  const std::optional<int64_t> old_capacity = known ? it->second.capacity : std::nullopt;
  NodeSpec wanted = spec;
  if (!set_capacity) wanted.capacity = old_capacity;
  const bool changed = !known || !it->second.present || wanted.capacity != old_capacity;
  if (changed) Upsert(t, wanted, now);
  AuditEntry entry = audit;
  entry.count = changed ? 1 : 0;
  AppendAudit(t, std::move(entry), now);
  if (changed) db_->wake->WakeAll();
  return changed;
}

Result<bool> MemoryStore::NodeSetEnabled(const std::string& name, bool enabled,
                                         const AuditEntry& audit) {
  MutexLock lock(db_->mu);
  Tables& t = db_->t;
  const TimeMs now = clock_->NowMs();
  auto it = t.nodes.find(name);
  if (it == t.nodes.end()) {
    Upsert(t, NodeSpec{name, std::nullopt}, now);
    it = t.nodes.find(name);
    it->second.enabled = !enabled;  // so that the flag below is a change
  }
  const bool changed = it->second.enabled != enabled;
  if (changed) {
    it->second.enabled = enabled;
    it->second.updated_at = now;
  }
  AuditEntry entry = audit;
  entry.count = changed ? 1 : 0;
  AppendAudit(t, std::move(entry), now);
  if (changed) db_->wake->WakeAll();
  return changed;
}

Result<bool> MemoryStore::NodeRemove(const std::string& name, const AuditEntry& audit) {
  MutexLock lock(db_->mu);
  Tables& t = db_->t;
  const TimeMs now = clock_->NowMs();
  auto it = t.nodes.find(name);
  if (it == t.nodes.end()) return NotFound("node '" + name + "' is not registered");
  const bool changed = it->second.present;
  if (changed) MarkRemoved(it->second, now);
  AuditEntry entry = audit;
  entry.count = changed ? 1 : 0;
  AppendAudit(t, std::move(entry), now);
  return changed;
}

Result<NodeSyncReport> MemoryStore::NodeSync(std::span<const NodeSpec> inventory, bool dry_run,
                                             const AuditEntry& audit) {
  MutexLock lock(db_->mu);
  Tables& t = db_->t;
  const TimeMs now = clock_->NowMs();
  std::vector<NodeInfo> registry;
  for (const auto& [name, n] : t.nodes) registry.push_back(n);
  NodeSyncPlan plan = PlanNodeSync(registry, inventory);
  if (dry_run) return plan.report;
  for (const NodeSpec& n : plan.upserts) Upsert(t, n, now);
  for (const std::string& name : plan.removals) MarkRemoved(t.nodes[name], now);
  AuditEntry entry = audit;
  entry.count = static_cast<int64_t>(plan.upserts.size() + plan.removals.size());
  AppendAudit(t, std::move(entry), now);
  if (plan.report.Changed()) db_->wake->WakeAll();
  return plan.report;
}

}  // namespace warden::memory
