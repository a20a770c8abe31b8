// SqliteStore: the claim path: the look, the pick, the claim, reading it back, start marks.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/claim_ahead.h"
#include "store/claim_flow.h"
#include "store/sqlite/batch_ids.h"
#include "store/sqlite/job_counts.h"
#include "store/sqlite/rows.h"
#include "store/sqlite/sqlite_store.h"

namespace warden::sqlite {

namespace {

std::string Placeholders(size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += i ? ", ?" : "?";
  return s;
}

// The claimable jobs of `p` in `queue_count` queues (0: every queue), as
// seen at the first parameter (FROM jobs j WHERE ...). The SQL text depends
// only on the list sizes and whether some limited queues are left out of a
// claim of every queue (`exclude_blocked`), so each worker reuses one
// prepared statement; every value is a parameter (BindClaimable).
std::string ClaimableWhere(const ClaimParams& p, size_t queue_count, bool exclude_blocked) {
  std::string sql =
      "state = 'available' AND (start_deadline_at IS NULL OR start_deadline_at >= ?)";
  // A claim that names its queues has the paused ones taken out of its
  // list (SqliteStore::FlowLocked): here each row would be looked up,
  // and a paused queue's whole backlog walked on every claim. So are the
  // limited queues without room.
  sql +=
      queue_count > 0
          ? " AND queue IN (" + Placeholders(queue_count) + ")"
          : std::string(" AND NOT EXISTS (SELECT 1 FROM queue_pauses qp WHERE qp.queue = j.queue)");
  sql += " AND (task IN (" + Placeholders(p.tasks.size()) + ")";
  sql += p.allow_commands ? " OR command <> '')" : ") AND command = ''";
  sql += " AND (avoid_until IS NULL OR avoid_until <= ? OR avoid_node <> ?)";
  sql +=
      " AND (concurrency_key IS NULL OR NOT EXISTS (SELECT 1 FROM jobs r WHERE "
      "r.state = 'running' AND r.concurrency_key = j.concurrency_key))";
  if (queue_count == 0 && exclude_blocked) {
    sql += " AND queue NOT IN (SELECT value FROM json_each(?))";
  }
  return sql;
}

// Binds ClaimableWhere's parameters from position `i`; returns the next.
// `blocked`: the JSON list of limited queues without room, for a claim of
// every queue that leaves them out.
int BindClaimable(Stmt& s, int i, const ClaimParams& p, std::span<const std::string> queues,
                  TimeMs now, const std::string* blocked = nullptr) {
  s.Bind(i++, now);
  for (const auto& q : queues) s.Bind(i++, q);
  for (const auto& t : p.tasks) s.Bind(i++, t);
  s.Bind(i++, now);
  s.Bind(i++, p.node);
  if (blocked != nullptr) s.Bind(i++, *blocked);
  return i;
}

std::string JsonList(const std::set<std::string>& names) {
  Json list = Json::array();
  for (const std::string& n : names) list.push_back(n);
  return list.dump();
}

// SQLite allows at most 500 arms in a compound SELECT; past this many
// queues a claim sorts their available jobs instead (see PickSql).
constexpr size_t kMaxMergedQueues = 64;

bool MergesQueues(const ClaimParams& p) {
  return p.queues.size() >= 2 && p.queues.size() <= kMaxMergedQueues;
}

}  // namespace

// What a claim decides on, and all it reads under the write lock: the rest
// of each job is read after the commit (SqliteStore::JobClaim).
const char* const kPickColumns =
    "id, lease_token, concurrency_key, delivery, crashes, max_crashes, retry, charged, "
    "max_attempts, priority, run_at, queue, task, command <> ''";  // (a compound SELECT orders
                                                                  // by its columns)

// Named, not left to the planner: with statistics (a user's ANALYZE, or
// `PRAGMA optimize`), SQLite chose to scan the whole table for the look
// before each claim, past every finished job: a worker ran 7x slower.
#define WARDEN_CLAIMABLE_FROM "FROM jobs j INDEXED BY jobs_claim WHERE "

std::string PickSql(const ClaimParams& p, bool capped_arms, bool exclude_blocked) {
  const std::string select =
      std::string("SELECT ") + kPickColumns + " " WARDEN_CLAIMABLE_FROM;
  const std::string order = " ORDER BY priority DESC, run_at, id";
  if (!MergesQueues(p)) {
    return select + ClaimableWhere(p, p.queues.size(), exclude_blocked) + order;
  }
  // One arm per queue: SQLite walks each queue's jobs_claim index in claim
  // order and merges the arms lazily (MERGE (UNION ALL)). `queue IN (a, b)`
  // cannot use that index's order, so it sorted every available job of
  // those queues on each claim (0.66 s a claim with 1M queued).
  std::string sql;
  for (size_t i = 0; i < p.queues.size(); ++i) {
    sql += i ? " UNION ALL " : "";
    // A limited queue's arm stops at its cap (a parameter; the others' at
    // the claim's limit), so that its backlog is never walked past the
    // jobs it may give.
    sql += capped_arms ? "SELECT * FROM (" + select + ClaimableWhere(p, 1, false) + order +
                             " LIMIT ?)"
                       : select + ClaimableWhere(p, 1, false);
  }
  return sql + order;
}

std::string AnyClaimableSql(const ClaimParams& p, bool exclude_blocked) {
  // EXISTS stops at the first row: the IN form costs nothing here.
  return "SELECT EXISTS (SELECT 1 " WARDEN_CLAIMABLE_FROM +
         ClaimableWhere(p, p.queues.size(), exclude_blocked) + ")";
}

#undef WARDEN_CLAIMABLE_FROM

const char* const kClaimSql =
    "UPDATE jobs SET state = 'running', worker_id = ?1, lease_token = lease_token + 1, "
    "attempt = attempt + 1, active_lease_ms = coalesce(lease_ms, ?2), "
    "lease_expires_at = ?3 + coalesce(lease_ms, ?2), started_mark = 0, "
    "attempt_started_at = NULL, cancel_requested = 0, started_at = ?3 "
    "WHERE id IN (SELECT value FROM json_each(?4)) AND state = 'available'";

const std::string kReadClaimedSql =
    std::string("SELECT ") + kJobColumns +
    " FROM jobs WHERE id IN (SELECT value FROM json_each(?1))";

namespace {

// Whether a claim of every queue leaves some limited queues out in SQL.
bool ExcludesBlocked(const ClaimParams& p, const ClaimFlow& flow) {
  return p.queues.empty() && !flow.blocked.empty();
}

}  // namespace

Result<bool> SqliteStore::AnyClaimableLocked(const ClaimParams& p, const ClaimFlow& flow,
                                             TimeMs now) {
  const bool exclude = ExcludesBlocked(p, flow);
  const std::string blocked = exclude ? JsonList(flow.blocked) : "";
  WARDEN_ASSIGN_OR_RETURN(Stmt q, db_->Prepare(AnyClaimableSql(p, exclude)));
  BindClaimable(q, 1, p, p.queues, now, exclude ? &blocked : nullptr);
  WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
  const bool any = row && q.Int(0) != 0;
  q.Reset();
  return any;
}

Result<std::vector<SqliteStore::Picked>> SqliteStore::PickLocked(const ClaimParams& p,
                                                                  const ClaimFlow& flow,
                                                                  TimeMs now, int limit) {
  const bool exclude = ExcludesBlocked(p, flow);
  const bool capped = MergesQueues(p) && std::any_of(p.queues.begin(), p.queues.end(),
                                                      [&](const std::string& q) {
                                                        return flow.caps.count(q) > 0;
                                                      });
  const std::string blocked = exclude ? JsonList(flow.blocked) : "";
  WARDEN_ASSIGN_OR_RETURN(Stmt pick, db_->Prepare(PickSql(p, capped, exclude)));
  if (!MergesQueues(p)) {
    BindClaimable(pick, 1, p, p.queues, now, exclude ? &blocked : nullptr);
  } else {
    int i = 1;
    for (const auto& q : p.queues) {
      i = BindClaimable(pick, i, p, std::span(&q, 1), now);
      if (capped) {
        auto cap = flow.caps.find(q);
        pick.Bind(i++, cap == flow.caps.end() ? static_cast<int64_t>(limit)
                                              : std::min<int64_t>(limit, cap->second));
      }
    }
  }

  std::vector<Picked> picked;
  std::unordered_set<std::string> keys;  // one job per concurrency key per batch
  std::map<std::string, int64_t> taken;  // of each limited queue
  // Once the free slots have theirs, jobs for the slots not free yet are
  // taken only if safe to claim ahead, from the next `ahead` rows at most.
  const int for_free_slots = limit - std::clamp(p.ahead, 0, limit);
  int looked_ahead = 0;
  int flow_skipped = 0;
  while (static_cast<int>(picked.size()) < limit) {
    WARDEN_ASSIGN_OR_RETURN(bool row, pick.Step());
    if (!row) break;
    const bool for_later_slot = static_cast<int>(picked.size()) >= for_free_slots;
    if (for_later_slot) {
      if (++looked_ahead > p.ahead) break;
      JobInfo job;
      job.delivery = ParseDelivery(pick.Text(3)).value_or(Delivery::kAtLeastOnce);
      job.crashes = static_cast<int>(pick.Int(4));
      job.max_crashes = static_cast<int>(pick.Int(5));
      job.retry = ParseRetryPolicy(pick.Text(6)).value_or(RetryPolicy::kDefault);
      job.charged = static_cast<int>(pick.Int(7));
      job.max_attempts = static_cast<int>(pick.Int(8));
      if (!SafeToClaimAhead(job)) continue;
    }
    std::string queue = pick.Text(11);
    if (!flow.empty() && !FlowTakes(flow, queue, taken[queue], for_later_slot)) {
      // A claim of every queue walks a limited queue's backlog once its cap
      // is taken: stop after as many rows as the claim may take (a claim
      // on PostgreSQL reads no more), and leave the rest to the next claim,
      // which leaves that queue out in SQL once it is full.
      if (++flow_skipped > limit) break;
      continue;
    }
    if (std::string key = pick.Text(2); !key.empty() && !keys.insert(key).second) continue;
    if (!flow.empty()) ++taken[queue];
    picked.push_back(Picked{pick.Int(0), pick.Int(1),
                            JobGroup{std::move(queue), pick.Text(12), pick.Int(13) != 0}});
  }
  pick.Reset();
  return picked;
}

// Both use the partial index jobs_due: one probe however many jobs wait.
Result<bool> SqliteStore::AnyDueLocked(TimeMs now) {
  return ExistsLocked("SELECT 1 FROM jobs INDEXED BY jobs_due WHERE state IN "
                      "('scheduled', 'retryable') AND run_at <= ?",
                      now);
}

Result<int> SqliteStore::PromoteDueLocked(TimeMs now) {
  WARDEN_RETURN_IF_ERROR(CountSelected(
      *db_,
      "SELECT " WARDEN_GROUP_COLUMNS ", state, count(*) FROM jobs INDEXED BY jobs_due WHERE "
      "state IN ('scheduled', 'retryable') AND run_at <= ? GROUP BY 1, 2, 3, 4",
      JobState::kAvailable, [&](Stmt& q) { q.Bind(1, now); }));
  WARDEN_ASSIGN_OR_RETURN(
      Stmt promote, db_->Prepare("UPDATE jobs INDEXED BY jobs_due SET state = 'available' "
                                 "WHERE state IN ('scheduled', 'retryable') AND run_at <= ?"));
  return promote.Bind(1, now).Exec();
}

// One statement, as the pauses alone were read before limits and nodes
// existed: the paused queues, the limits of the claim's queues (of every
// queue for a claim of every queue), and the claiming worker's node if the
// registry names it. A queue without a limit and an unregistered node have
// no row, so a claim of unlimited queues by a worker outside the registry
// reads what it read before, plus two empty probes.
const char* const kFlowSql =
    "SELECT queue, 0, NULL, NULL, NULL FROM queue_pauses UNION ALL "
    "SELECT queue, 1, concurrency, rate_count, rate_ms FROM queue_limits WHERE ?1 = '[]' OR "
    "queue IN (SELECT value FROM json_each(?1)) UNION ALL "
    "SELECT n.name, 2, n.present AND n.enabled, n.capacity, NULL FROM nodes n JOIN workers w "
    "ON w.node = n.name WHERE w.id = ?2";

Result<bool> SqliteStore::FlowLocked(const ClaimParams& p, TimeMs now, bool prune,
                                     ClaimParams* narrowed, ClaimFlow* flow) {
  Json names = Json::array();
  for (const std::string& q : p.queues) names.push_back(q);
  WARDEN_ASSIGN_OR_RETURN(Stmt q, db_->Prepare(kFlowSql));
  q.Bind(1, names.dump()).Bind(2, p.worker);
  std::set<std::string> paused;
  std::vector<FlowRow> limited;
  std::optional<NodeRow> node;
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    switch (q.Int(1)) {
      case 0:
        paused.insert(q.Text(0));
        break;
      case 1: {
        FlowRow r;
        r.queue = q.Text(0);
        if (!q.IsNull(2)) r.limits.concurrency = q.Int(2);
        if (!q.IsNull(3) && !q.IsNull(4)) r.limits.rate = RateLimit{q.Int(3), Millis(q.Int(4))};
        limited.push_back(std::move(r));
        break;
      }
      default:
        node = NodeRow{q.Text(0), q.Bool(2), q.OptInt(3)};
    }
  }
  q.Reset();
  std::erase_if(limited, [&](const FlowRow& r) { return paused.count(r.queue) > 0; });
  for (FlowRow& r : limited) {
    if (r.limits.concurrency) {
      // job_counts is exact in every transaction (job_counts.h).
      WARDEN_ASSIGN_OR_RETURN(
          Stmt c, db_->Prepare("SELECT coalesce(sum(n), 0) FROM job_counts WHERE queue = ? AND "
                               "state = 'running'"));
      WARDEN_ASSIGN_OR_RETURN(bool row, c.Bind(1, r.queue).Step());
      r.running = row ? c.Int(0) : 0;
      c.Reset();
    }
    if (r.limits.rate) {
      const TimeMs window_start = now - r.limits.rate->per.count();  // exclusive
      if (prune) {
        WARDEN_ASSIGN_OR_RETURN(
            Stmt d, db_->Prepare("DELETE FROM queue_starts WHERE queue = ? AND at <= ?"));
        WARDEN_RETURN_IF_ERROR(d.Bind(1, r.queue).Bind(2, window_start).Exec().status());
      }
      WARDEN_ASSIGN_OR_RETURN(
          Stmt c, db_->Prepare("SELECT coalesce(sum(n), 0) FROM queue_starts WHERE queue = ? "
                               "AND at > ?"));
      WARDEN_ASSIGN_OR_RETURN(bool row, c.Bind(1, r.queue).Bind(2, window_start).Step());
      r.recent_starts = row ? c.Int(0) : 0;
      c.Reset();
    }
  }
  *flow = FlowOf(limited);
  if (node) WARDEN_RETURN_IF_ERROR(ApplyNodeLocked(*node, flow));
  return Narrow(p, paused, *flow, narrowed);
}

Status SqliteStore::RecordStartsLocked(const ClaimFlow& flow, std::span<const Picked> picked,
                                       TimeMs now) {
  if (flow.rated.empty()) return Status::Ok();
  std::map<std::string, int64_t> started;
  for (const Picked& job : picked) {
    if (flow.rated.count(job.group.queue)) ++started[job.group.queue];
  }
  for (const auto& [queue, n] : started) {
    WARDEN_ASSIGN_OR_RETURN(
        Stmt ins, db_->Prepare("INSERT INTO queue_starts (queue, at, n) VALUES (?, ?, ?) "
                               "ON CONFLICT (queue, at) DO UPDATE SET n = n + excluded.n"));
    WARDEN_RETURN_IF_ERROR(ins.Bind(1, queue).Bind(2, now).Bind(3, n).Exec().status());
  }
  return Status::Ok();
}

Result<std::vector<JobInfo>> SqliteStore::JobClaim(const ClaimParams& claim) {
  MutexLock lock(mu_);
  const TimeMs seen_at = clock_->NowMs();
  ClaimParams narrowed;
  ClaimFlow flow;
  WARDEN_ASSIGN_OR_RETURN(bool any_open, FlowLocked(claim, seen_at, false, &narrowed, &flow));
  if (!any_open) return std::vector<JobInfo>{};
  // Look before taking the write lock: an idle worker's poll then costs one
  // read, and a process frozen while polling holds no lock over the others.
  WARDEN_ASSIGN_OR_RETURN(bool due, AnyDueLocked(seen_at));
  if (!due) {
    WARDEN_ASSIGN_OR_RETURN(bool any, AnyClaimableLocked(narrowed, flow, seen_at));
    if (!any) return std::vector<JobInfo>{};
  }

  // The claim's commit is not fsynced. Every process that could act on the
  // claim runs on this machine (SQLite is one host's file), so a power loss
  // that drops it also ends them, and the job is simply available again;
  // an application crash loses nothing (the OS has the write). The next
  // fsynced commit of this file (an outcome, a start mark, a heartbeat,
  // any enqueue) makes the claim durable before anything that depends on
  // it: the WAL is written in order. One fsync fewer per job on the way to
  // its start.
  UnsyncedCommits unsynced(*db_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  // Read under the lock, so recorded times follow the commit order.
  const TimeMs now = clock_->NowMs();
  WARDEN_ASSIGN_OR_RETURN(
      bool active, ExistsLocked("SELECT 1 FROM workers WHERE id = ? AND state = 'active'",
                                claim.worker));
  if (!active) {
    return FailedPrecondition("worker " + std::to_string(claim.worker) +
                              " is not active (declared dead, draining or stopped)");
  }
  if (due) {
    // Due scheduled and retryable jobs become available first, so a claim
    // never waits for the sweeper.
    WARDEN_RETURN_IF_ERROR(PromoteDueLocked(now).status());
  }
  // Again under the write lock: once a pause or a limit has committed, no
  // claim takes a job of its queue beyond it, and the running jobs and
  // recent claims counted here are every committed one.
  WARDEN_ASSIGN_OR_RETURN(any_open, FlowLocked(claim, now, true, &narrowed, &flow));
  if (!any_open) {
    WARDEN_RETURN_IF_ERROR(tx->Commit());  // the promotions and pruning, if any
    return std::vector<JobInfo>{};
  }
  const ClaimParams& p = narrowed;
  WARDEN_ASSIGN_OR_RETURN(std::vector<Picked> picked, PickLocked(p, flow, now, p.limit));
  if (picked.empty()) {
    WARDEN_RETURN_IF_ERROR(tx->Commit());  // the promotions, if any
    return std::vector<JobInfo>{};
  }
  // One statement for the batch: run per job, opening its cursors cost as
  // much again as the row's write (bench/row_update_cost.py).
  std::vector<JobId> ids;
  ids.reserve(picked.size());
  for (const Picked& job : picked) ids.push_back(job.id);
  const std::string id_list = JsonIdList(ids);
  WARDEN_ASSIGN_OR_RETURN(Stmt upd, db_->Prepare(kClaimSql));
  upd.Bind(1, p.worker).Bind(2, static_cast<int64_t>(p.default_lease.count())).Bind(3, now);
  WARDEN_ASSIGN_OR_RETURN(int changed, upd.Bind(4, id_list).Exec());
  if (changed != static_cast<int>(picked.size())) {
    return Internal("claimed jobs changed under the write lock (" + std::to_string(changed) +
                    " of " + std::to_string(picked.size()) + " still available)");
  }
  CountChanges counts;  // a batch's worth, per group: two upserts for one task
  for (const Picked& job : picked) counts.Move(job.group, JobState::kAvailable, JobState::kRunning);
  WARDEN_RETURN_IF_ERROR(counts.Apply(*db_));
  WARDEN_RETURN_IF_ERROR(RecordStartsLocked(flow, picked, now));
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return ReadClaimedLocked(p.worker, picked, id_list);
}

// The claimed jobs are read whole after the commit, so that the write lock,
// which the completions wait on, is held only for what the claim decides
// on and writes. (UPDATE ... RETURNING would read them under the lock, and
// SQLite runs RETURNING as a trigger with a statement journal: it tripled
// the cost of a claim.) A job changed since the commit (a process frozen
// here past its lease) is left out unless it is still this claim's: a
// job the worker holds but was not told of is handed back by the worker's
// heartbeats (core/lost_claims.h), like one whose claim's reply was lost.
Result<std::vector<JobInfo>> SqliteStore::ReadClaimedLocked(WorkerId worker,
                                                            std::span<const Picked> picked,
                                                            const std::string& id_list) {
  IdPlaces places;
  places.reserve(picked.size());
  for (size_t i = 0; i < picked.size(); ++i) places.emplace_back(picked[i].id, i);
  std::sort(places.begin(), places.end());
  WARDEN_ASSIGN_OR_RETURN(Stmt q, db_->Prepare(kReadClaimedSql));
  q.Bind(1, id_list);
  std::vector<std::optional<JobInfo>> in_claim_order(picked.size());
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    JobInfo job = JobFromRow(q);
    const std::optional<size_t> at = PlaceOf(places, job.id);
    if (!at || job.state != JobState::kRunning || job.worker != worker ||
        job.lease_token != picked[*at].lease_token + 1) {
      continue;
    }
    in_claim_order[*at] = std::move(job);
  }
  q.Reset();
  std::vector<JobInfo> claimed;
  claimed.reserve(picked.size());
  for (auto& job : in_claim_order) {
    if (job) claimed.push_back(std::move(*job));
  }
  return claimed;
}

Result<bool> SqliteStore::JobMarkStarted(JobRef ref) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  const TimeMs now = clock_->NowMs();
  WARDEN_ASSIGN_OR_RETURN(
      Stmt upd, db_->Prepare("UPDATE jobs SET started_mark = 1, attempt_started_at = ? "
                             "WHERE id = ? AND lease_token = ? AND state = 'running' AND "
                             "cancel_requested = 0"));
  WARDEN_ASSIGN_OR_RETURN(int changed,
                          upd.Bind(1, now).Bind(2, ref.id).Bind(3, ref.lease_token).Exec());
  if (changed == 0) return false;
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return true;
}

}  // namespace warden::sqlite
