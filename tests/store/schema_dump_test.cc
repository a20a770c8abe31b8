// Each backend's schema, as its migrations leave it, against the dump
// committed in tests/store/schema/: a new database, and one made at
// version 1 and migrated by opening it, must both equal it. A change to a
// migration or a new one then shows in review as a change to the dump
// (graphile-worker keeps its schema so). After a deliberate change, write
// the dumps anew: WARDEN_WRITE_SCHEMA_DUMPS=1 store_test
// --gtest_filter='SchemaDump*', and read the diff.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "pg_test_db.h"
#include "store/migrations.h"
#include "store/postgres/pg_conn.h"
#include "store/postgres/pg_schema.h"
#include "store/sqlite/schema.h"
#include "store/store.h"

namespace warden {
namespace {

using testing::PgTestDb;

std::string DumpPath(const std::string& backend) {
  return std::string(WARDEN_SOURCE_DIR) + "/tests/store/schema/" + backend + ".sql";
}

// Compares `dump` with the committed file, or writes it there when asked.
void ExpectCommittedDump(const std::string& backend, const std::string& dump) {
  const std::string path = DumpPath(backend);
  if (std::getenv("WARDEN_WRITE_SCHEMA_DUMPS") != nullptr) {
    std::ofstream(path) << dump;
    return;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << path << " is missing: write it with WARDEN_WRITE_SCHEMA_DUMPS=1";
  std::stringstream committed;
  committed << in.rdbuf();
  EXPECT_EQ(dump, committed.str())
      << "the " << backend << " schema differs from " << path
      << ": if the change is meant, write the dump anew (WARDEN_WRITE_SCHEMA_DUMPS=1) and "
         "commit it with the migration";
}

TEST(MigrationFilesTest, AreNumberedFromOneWithoutAGapAndMatchTheSchemaVersion) {
  auto sqlite = NumberedMigrations(SqliteMigrationFiles(), sqlite::kSchemaVersion);
  ASSERT_TRUE(sqlite.has_value()) << sqlite.error().ToString();
  EXPECT_EQ(sqlite->back().version, sqlite::kSchemaVersion);
  auto pg = NumberedMigrations(PostgresMigrationFiles(), pg::kSchemaVersion);
  ASSERT_TRUE(pg.has_value()) << pg.error().ToString();
  EXPECT_EQ(pg->back().version, pg::kSchemaVersion);
}

TEST(MigrationFilesTest, AGapABadNameOrAMissingFileIsAnError) {
  const MigrationFile gap[] = {{"0001_a.sql", ""}, {"0003_c.sql", ""}};
  auto r = NumberedMigrations(gap, 2);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("'0003_c.sql' where 2 was due"), std::string::npos)
      << r.error().ToString();
  const MigrationFile bad[] = {{"1_a.sql", ""}};
  EXPECT_FALSE(NumberedMigrations(bad, 1).has_value());
  const MigrationFile one[] = {{"0001_a.sql", ""}};
  r = NumberedMigrations(one, 2);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("written for schema 2"), std::string::npos)
      << r.error().ToString();
  const MigrationFile unordered[] = {{"0002_b.sql", "B"}, {"0001_a.sql", "A"}};
  r = NumberedMigrations(unordered, 2);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ((*r)[0].sql, "A");
  EXPECT_EQ((*r)[1].version, 2);
}

class SchemaDumpSqliteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/warden-schema-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static std::string Dump(const std::string& path) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* q = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db,
                                 "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT "
                                 "NULL ORDER BY type, name",
                                 -1, &q, nullptr),
              SQLITE_OK);
    std::string out;
    while (sqlite3_step(q) == SQLITE_ROW) {
      out += "-- " + std::string(reinterpret_cast<const char*>(sqlite3_column_text(q, 0))) +
             " " + reinterpret_cast<const char*>(sqlite3_column_text(q, 1)) + "\n" +
             reinterpret_cast<const char*>(sqlite3_column_text(q, 2)) + ";\n\n";
    }
    sqlite3_finalize(q);
    sqlite3_close(db);
    return out;
  }
  static void OpenWithWarden(const std::string& path) {
    auto store = OpenStore("sqlite:" + path);
    ASSERT_TRUE(store.has_value()) << store.error().ToString();
    EXPECT_EQ((*store)->SchemaVersion().value(), sqlite::kSchemaVersion);
  }
  std::string dir_;
};

TEST_F(SchemaDumpSqliteTest, ANewDatabaseEqualsTheCommittedDump) {
  OpenWithWarden(dir_ + "/new.db");
  ExpectCommittedDump("sqlite", Dump(dir_ + "/new.db"));
}

TEST_F(SchemaDumpSqliteTest, ADatabaseMigratedFromVersionOneEqualsTheCommittedDump) {
  if (std::getenv("WARDEN_WRITE_SCHEMA_DUMPS") != nullptr) GTEST_SKIP() << "writing dumps";
  const std::string path = dir_ + "/v1.db";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  const std::string v1 = std::string(SqliteMigrationFiles()[0].bytes) +
                         "CREATE TABLE warden_schema (version INTEGER NOT NULL);"
                         "INSERT INTO warden_schema VALUES (1);";
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, v1.c_str(), nullptr, nullptr, &err), SQLITE_OK) << err;
  sqlite3_close(db);
  OpenWithWarden(path);
  ExpectCommittedDump("sqlite", Dump(path));
}

// Every object of the schema `warden`, one block each, in a fixed order:
// what pg_dump --schema-only says, from the catalogs, so that the text does
// not depend on the pg_dump binary's version.
const char* const kPgDumpSql = R"sql(
SELECT kind, name, def FROM (
  SELECT 'table' AS kind, c.relname AS name,
         'CREATE TABLE warden.' || c.relname || E' (\n' || string_agg(
           '  ' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) ||
           CASE a.attidentity WHEN 'd' THEN ' GENERATED BY DEFAULT AS IDENTITY'
                              WHEN 'a' THEN ' GENERATED ALWAYS AS IDENTITY' ELSE '' END ||
           CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END ||
           coalesce(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), ''),
           E',\n' ORDER BY a.attnum) || E'\n)' AS def
  FROM pg_class c
  JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'warden'
  JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
  LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
  WHERE c.relkind = 'r'
  GROUP BY c.relname
  UNION ALL
  SELECT 'constraint', con.conrelid::regclass::text || ' ' || con.conname,
         'ALTER TABLE ' || con.conrelid::regclass::text || ' ADD CONSTRAINT ' || con.conname ||
         ' ' || pg_get_constraintdef(con.oid)
  FROM pg_constraint con JOIN pg_namespace n ON n.oid = con.connamespace
  WHERE n.nspname = 'warden' AND con.contype <> 'n'
  UNION ALL
  SELECT 'index', indexname, indexdef FROM pg_indexes WHERE schemaname = 'warden'
  UNION ALL
  SELECT 'view', viewname, 'CREATE VIEW warden.' || viewname || E' AS\n' || definition
  FROM pg_views WHERE schemaname = 'warden'
  UNION ALL
  SELECT 'function', p.oid::regprocedure::text, pg_get_functiondef(p.oid)
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'warden'
  UNION ALL
  SELECT 'trigger', t.tgrelid::regclass::text || ' ' || t.tgname, pg_get_triggerdef(t.oid)
  FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = 'warden' AND NOT t.tgisinternal
) o ORDER BY kind, name
)sql";

class SchemaDumpPostgresTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WARDEN_REQUIRE_PG();
    auto db = PgTestDb::Create();
    ASSERT_TRUE(db.has_value()) << db.error().ToString();
    db_ = std::move(db).value();
    auto c = pg::Conn::Connect(db_->url());
    ASSERT_TRUE(c.has_value()) << c.error().ToString();
    sql_ = std::move(c).value();
  }
  std::string Dump() {
    auto r = sql_->Exec(kPgDumpSql);
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    if (!r.has_value()) return "";
    std::string out;
    for (int i = 0; i < r->size(); ++i) {
      std::string def = r->Text(i, 2);
      while (!def.empty() && (def.back() == '\n' || def.back() == ' ')) def.pop_back();
      out += "-- " + r->Text(i, 0) + " " + r->Text(i, 1) + "\n" + def + ";\n\n";
    }
    return out;
  }
  void OpenWithWarden() {
    auto store = OpenStore(db_->url());
    ASSERT_TRUE(store.has_value()) << store.error().ToString();
    EXPECT_EQ((*store)->SchemaVersion().value(), pg::kSchemaVersion);
  }
  std::unique_ptr<PgTestDb> db_;
  std::unique_ptr<pg::Conn> sql_;
};

TEST_F(SchemaDumpPostgresTest, ANewDatabaseEqualsTheCommittedDump) {
  OpenWithWarden();
  ExpectCommittedDump("postgres", Dump());
}

TEST_F(SchemaDumpPostgresTest, ADatabaseMigratedFromVersionOneEqualsTheCommittedDump) {
  if (std::getenv("WARDEN_WRITE_SCHEMA_DUMPS") != nullptr) GTEST_SKIP() << "writing dumps";
  ASSERT_TRUE(sql_->ExecScript("CREATE SCHEMA warden; CREATE TABLE warden.schema_version "
                               "(version integer PRIMARY KEY, applied_at timestamptz NOT NULL "
                               "DEFAULT now()); " +
                               std::string(PostgresMigrationFiles()[0].bytes) +
                               "; INSERT INTO warden.schema_version (version) VALUES (1)")
                  .ok());
  OpenWithWarden();
  ExpectCommittedDump("postgres", Dump());
}

}  // namespace
}  // namespace warden
