#include "store/sqlite/schema.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "store/migrations.h"

namespace warden::sqlite {
namespace {

// The migrations, checked once (src/store/migrations.h).
const Result<std::vector<Migration>>& Migrations() {
  static const Result<std::vector<Migration>> migrations =
      NumberedMigrations(SqliteMigrationFiles(), kSchemaVersion);
  return migrations;
}

// Every table and index the migrations create (a new migration adds its own).
const char* const kWardenObjects[] = {
    "jobs", "jobs_claim", "jobs_due", "jobs_running_worker", "jobs_running_lease",
    "jobs_deadline", "jobs_state", "jobs_finished", "jobs_running_ckey", "jobs_live_unique",
    "attempts", "attempts_outcome", "attempts_lost",
    "workers", "workers_live_name",
    "leaders",
    "fenced_writes", "fenced_writes_job",
    "queue_pauses", "api_tokens", "api_tokens_live_name", "audit_log",
    "bulk_ops", "bulk_ops_running",
    "metrics_retired",
    "job_counts", "jobs_crash_loop", "jobs_due_group",
    "queue_limits", "queue_starts",
    "nodes", "workers_node",
    "job_actions", "job_actions_job",
};

Result<std::set<std::string>> SchemaNames(Db& db) {
  WARDEN_ASSIGN_OR_RETURN(Stmt q, db.Prepare("SELECT name FROM sqlite_master"));
  std::set<std::string> names;
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    names.insert(q.Text(0));
  }
  q.Reset();
  return names;
}

// nullopt: no warden_schema table yet.
Result<std::optional<int>> ReadVersionIfAny(Db& db) {
  WARDEN_ASSIGN_OR_RETURN(auto names, SchemaNames(db));
  if (!names.count("warden_schema")) return std::optional<int>();
  WARDEN_ASSIGN_OR_RETURN(Stmt q, db.Prepare("SELECT max(version) FROM warden_schema"));
  WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
  const int v = row && !q.IsNull(0) ? static_cast<int>(q.Int(0)) : 0;
  q.Reset();
  return std::optional<int>(v);
}

Status RefuseNewer(int version) {
  if (version <= kSchemaVersion) return Status::Ok();
  return FailedPrecondition("the database has schema version " + std::to_string(version) +
                            ", newer than this warden knows (" + std::to_string(kSchemaVersion) +
                            "): upgrade warden");
}

}  // namespace

Status CheckBeforeUse(Db& db) {
  WARDEN_ASSIGN_OR_RETURN(auto names, SchemaNames(db));
  if (names.count("warden_schema")) {
    WARDEN_ASSIGN_OR_RETURN(std::optional<int> version, ReadVersionIfAny(db));
    return RefuseNewer(version.value_or(0));
  }
  for (const char* name : kWardenObjects) {
    if (names.count(name)) {
      return FailedPrecondition(
          "this is another application's SQLite database: it has a table or index named '" +
          std::string(name) + "' that warden did not create (give warden a file of its own)");
    }
  }
  return Status::Ok();
}

Result<int> ReadSchemaVersion(Db& db) {
  WARDEN_ASSIGN_OR_RETURN(std::optional<int> version, ReadVersionIfAny(db));
  return version.value_or(0);
}

Status Migrate(Db& db) {
  static_assert(kSchemaVersion >= 1);
  WARDEN_ASSIGN_OR_RETURN(std::optional<int> current, ReadVersionIfAny(db));
  if (current && *current == kSchemaVersion) return Status::Ok();
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(db));
  WARDEN_RETURN_IF_ERROR(
      db.ExecScript("CREATE TABLE IF NOT EXISTS warden_schema (version INTEGER NOT NULL)"));
  WARDEN_ASSIGN_OR_RETURN(int version, ReadSchemaVersion(db));
  WARDEN_RETURN_IF_ERROR(RefuseNewer(version));
  WARDEN_RETURN_IF_ERROR(Migrations().status());
  for (const Migration& m : *Migrations()) {
    if (m.version <= version) continue;
    WARDEN_RETURN_IF_ERROR(db.ExecScript(std::string(m.sql))
                               .Annotate("migration " + std::string(m.name)));
    WARDEN_ASSIGN_OR_RETURN(Stmt ins, db.Prepare("INSERT INTO warden_schema VALUES (?)"));
    WARDEN_RETURN_IF_ERROR(ins.Bind(1, m.version).Exec().status());
  }
  return tx->Commit();
}

}  // namespace warden::sqlite
