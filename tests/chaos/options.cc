#include "options.h"

#include <fmt/core.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <sstream>

#include "warden/duration.h"

namespace chaos {

const char* FaultName(FaultKind k) {
  switch (k) {
    case FaultKind::kKillWorker:
      return "kill-worker";
    case FaultKind::kFreezeWorker:
      return "freeze-worker";
    case FaultKind::kFreezeHost:
      return "freeze-host";
    case FaultKind::kKillJob:
      return "kill-job";
    case FaultKind::kSqliteLock:
      return "sqlite-lock";
    case FaultKind::kPgRestart:
      return "pg-restart";
    case FaultKind::kPgKillBackends:
      return "pg-kill-backends";
    case FaultKind::kPartition:
      return "partition";
    case FaultKind::kNodeDisable:
      return "node-disable";
    case FaultKind::kNodeRemove:
      return "node-remove";
    case FaultKind::kNodeForceRemove:
      return "node-force-remove";
    case FaultKind::kNodeResize:
      return "node-resize";
  }
  return "?";
}

const std::vector<FaultKind>& AllFaultKinds() {
  static const std::vector<FaultKind> all = {
      FaultKind::kKillWorker,     FaultKind::kFreezeWorker,
      FaultKind::kFreezeHost,     FaultKind::kKillJob,
      FaultKind::kSqliteLock,     FaultKind::kPgRestart,
      FaultKind::kPgKillBackends, FaultKind::kPartition,
      FaultKind::kNodeDisable,    FaultKind::kNodeRemove,
      FaultKind::kNodeForceRemove, FaultKind::kNodeResize};
  return all;
}

bool IsStoreFault(FaultKind k) {
  return k == FaultKind::kSqliteLock || k == FaultKind::kPgRestart ||
         k == FaultKind::kPgKillBackends;
}

bool IsNodeFault(FaultKind k) {
  return k == FaultKind::kNodeDisable || k == FaultKind::kNodeRemove ||
         k == FaultKind::kNodeForceRemove || k == FaultKind::kNodeResize;
}

bool ClosesNode(FaultKind k) { return IsNodeFault(k) && k != FaultKind::kNodeResize; }

namespace {

std::string ShellQuote(const std::string& s) {
  if (!s.empty() &&
      s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                          "0123456789-_./:=,@%+") == std::string::npos) {
    return s;
  }
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A CLI11 validator-and-setter for durations ("250ms", "10m").
CLI::Option* AddDuration(CLI::App& app, const std::string& name, Millis* out,
                         const std::string& help) {
  return app.add_option_function<std::string>(
      name,
      [out, name](const std::string& text) {
        auto d = warden::ParseDuration(text);
        if (!d.has_value())
          throw CLI::ValidationError(name, d.error().message());
        *out = *d;
      },
      help + " (default " + warden::FormatDuration(*out) + ")");
}

uint64_t FreshSeed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd() ^
         static_cast<uint64_t>(
             std::chrono::steady_clock::now().time_since_epoch().count());
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

std::string Options::RerunCommand() const {
  // A server that `pg-cluster.sh run` started is gone after the run: the
  // rerun starts a fresh one and names it the same way.
  const std::string pg_url = Env("WARDEN_TEST_PG_URL");
  const std::string pg_dir = Env("WARDEN_TEST_PG_CLUSTER");
  const bool via_run = !pg_url.empty() && db == pg_url;
  bool plain = true;  // every argument needs no quoting
  std::string out;
  for (size_t i = 0; i < argv.size(); ++i) {
    std::string a = argv[i];
    if (a == "--seed") {
      ++i;
      continue;
    }
    if (a.rfind("--seed=", 0) == 0) continue;
    if (via_run && a == pg_url) {
      a = "\"$WARDEN_TEST_PG_URL\"";
    } else if (via_run && !pg_dir.empty() && a == pg_dir) {
      a = "\"$WARDEN_TEST_PG_CLUSTER\"";
    } else {
      plain = plain && ShellQuote(a) == a;
      a = ShellQuote(a);
    }
    if (!out.empty()) out += ' ';
    out += a;
  }
  out += fmt::format(" --seed {:#018x}", seed);
  if (via_run && plain) {
    return ShellQuote(cluster_script) + " run sh -c '" + out + "'";
  }
  return out;
}

bool ParseOptions(int argc, char** argv, Options* o, int* exit_code) {
  o->argv.assign(argv, argv + argc);
  CLI::App app{
      "warden chaos runner: a real workload against a real store while faults "
      "are injected, "
      "then docs/design.md's invariants checked against the store and a ledger of "
      "what really ran"};
  app.add_option("--db", o->db,
                 "sqlite | PATH.db (fresh SQLite file) | postgresql://... (a "
                 "fresh database is "
                 "made on that server) | pg-private (a private cluster)")
      ->required();
  std::string seed;
  app.add_option("--seed", seed,
                 "64-bit seed (decimal or 0x hex); default: random, printed");
  AddDuration(app, "--duration", &o->duration, "fault window");
  app.add_option("--jobs", o->jobs, "jobs to enqueue")
      ->capture_default_str()
      ->check(CLI::Range(10, 10'000'000));
  app.add_option("--workers", o->workers,
                 "worker processes (half `warden worker`, half in-process)")
      ->capture_default_str()
      ->check(CLI::Range(2, 64));
  app.add_option("--concurrency", o->concurrency, "slots per worker")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_option("--limited-concurrency", o->limited_concurrency,
                 "concurrency limit of the second queue, which a share of the jobs go to "
                 "(0: one queue, no limit)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  app.add_option("--nodes", o->nodes,
                 "the workers spread over this many nodes (`--node node-K`), registered "
                 "before they start (0: no nodes, no node faults, no invariant 8)")
      ->capture_default_str()
      ->check(CLI::Range(0, 64));
  app.add_option("--node-capacity", o->node_capacity,
                 "capacity of node-1, below its workers' slots so that it is reached "
                 "(invariant 8; 0: no capacity)")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  AddDuration(app, "--shutdown-timeout", &o->shutdown_timeout,
              "workers' --shutdown-timeout: how long the running jobs of a worker whose "
              "node takes no work may finish before they are released");
  AddDuration(app, "--heartbeat", &o->heartbeat, "workers' heartbeat");
  AddDuration(app, "--lease", &o->lease,
              "workers' lease (and keepalive threshold)");
  AddDuration(app, "--sweep-interval", &o->sweep, "workers' sweep interval");
  AddDuration(app, "--kill-margin", &o->kill_margin,
              "margin over the sweep interval for a killed worker's jobs");
  AddDuration(app, "--freeze-margin", &o->freeze_margin,
              "margin over lease + 2 sweep intervals for a frozen or cut-off "
              "worker's jobs");
  AddDuration(app, "--stale-margin", &o->stale_margin,
              "how long after its worker thaws or dies a stale run may still "
              "show activity");
  AddDuration(app, "--drain-timeout", &o->drain_timeout,
              "after the fault window, how long every job may take to finish "
              "(0: the largest "
              "of 2m, --duration and 50ms per job)");
  AddDuration(
      app, "--stall-timeout", &o->stall_timeout,
      "during the drain, how long without any job finishing counts as stuck");
  AddDuration(app, "--fault-gap", &o->fault_gap, "mean time between faults");
  std::string faults;
  app.add_option(
      "--faults", faults,
      "comma-separated fault kinds (default: all the backend supports): "
      "kill-worker, "
      "freeze-worker, freeze-host, kill-job, sqlite-lock, pg-restart, "
      "pg-kill-backends, partition, node-disable, node-remove, node-force-remove");
  app.add_option(
      "--pg-cluster", o->pg_cluster,
      "scripts/pg-cluster.sh DIR of the server --db names: enables pg-restart "
      "(nothing else may use that server)");
  app.add_flag("--partition", o->partition,
               "root only, with --db pg-private: workers on two network "
               "namespaces, one cut "
               "off at times");
  app.add_flag("--keep", o->keep,
               "keep the run directory (kept anyway on a violation)");
  app.add_option("--tmp", o->tmp_root, "where the run directory goes")
      ->capture_default_str();
  app.add_option("--warden", o->warden_bin,
                 "the warden binary (default: this build's)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    *exit_code = app.exit(e);
    return false;
  }
  auto fail = [&](const std::string& why) {
    fmt::print(stderr, "warden_chaos: {}\n", why);
    *exit_code = 2;
    return false;
  };
  if (seed.empty()) {
    o->seed = FreshSeed();
  } else {
    char* end = nullptr;
    o->seed = std::strtoull(seed.c_str(), &end, 0);
    if (end == seed.c_str() || *end != '\0')
      return fail("--seed: not a number: " + seed);
  }
  if (o->db.rfind("postgresql://", 0) == 0 ||
      o->db.rfind("postgres://", 0) == 0) {
    o->backend = Backend::kPostgres;
  } else if (o->db == "pg-private") {
    o->backend = Backend::kPostgres;
    o->pg_private = true;
  } else if (o->db != "sqlite" && std::filesystem::exists(o->db)) {
    return fail("--db " + o->db +
                " exists: give a path for a fresh file, or `sqlite`");
  }
  const bool pg = o->backend == Backend::kPostgres;
  if (o->partition && !o->pg_private)
    return fail("--partition needs --db pg-private");
  if (o->partition && geteuid() != 0)
    return fail("--partition needs root (network namespaces)");
  if (o->lease < o->heartbeat * 3)
    return fail("--lease must be at least 3 heartbeats");
  if (faults.empty()) {
    for (FaultKind k : AllFaultKinds()) {
      if (k == FaultKind::kSqliteLock && pg) continue;
      if (k == FaultKind::kPgKillBackends && !pg) continue;
      if (k == FaultKind::kPgRestart &&
          !(o->pg_private || !o->pg_cluster.empty()))
        continue;
      if (k == FaultKind::kPartition && !o->partition) continue;
      if (IsNodeFault(k) && o->nodes == 0) continue;
      if (k == FaultKind::kNodeResize && o->node_capacity == 0) continue;
      o->faults.insert(k);
    }
  } else {
    std::stringstream ss(faults);
    for (std::string name; std::getline(ss, name, ',');) {
      bool found = false;
      for (FaultKind k : AllFaultKinds()) {
        if (name == FaultName(k)) {
          o->faults.insert(k);
          found = true;
        }
      }
      if (!found) return fail("--faults: unknown fault kind '" + name + "'");
    }
    if (o->faults.count(FaultKind::kSqliteLock) && pg)
      return fail("sqlite-lock needs SQLite");
    if (o->faults.count(FaultKind::kPgKillBackends) && !pg) {
      return fail("pg-kill-backends needs PostgreSQL");
    }
    if (o->faults.count(FaultKind::kPgRestart) &&
        !(o->pg_private || !o->pg_cluster.empty())) {
      return fail("pg-restart needs --db pg-private or --pg-cluster DIR");
    }
    if (o->faults.count(FaultKind::kPartition) && !o->partition) {
      return fail("the partition fault needs --partition");
    }
    for (FaultKind k : o->faults) {
      if (IsNodeFault(k) && o->nodes == 0) {
        return fail(std::string(FaultName(k)) + " needs --nodes 1 or more");
      }
    }
    if (o->faults.count(FaultKind::kNodeResize) && o->node_capacity == 0) {
      return fail("node-resize needs a --node-capacity");
    }
  }
  if (o->nodes > o->workers) {
    return fail(fmt::format("--nodes {}: more nodes than --workers {}", o->nodes, o->workers));
  }
  if (o->drain_timeout.count() == 0) {
    o->drain_timeout =
        std::max({Millis(120'000), o->duration, Millis(50) * o->jobs});
  }
  o->cluster_script = Env("WARDEN_PG_CLUSTER_SCRIPT");
  if (o->cluster_script.empty())
    o->cluster_script = WARDEN_SOURCE_DIR "/scripts/pg-cluster.sh";
  if (o->warden_bin.empty()) o->warden_bin = WARDEN_BIN;
  o->worker_bin = CHAOS_WORKER_BIN;
  o->job_bin = CHAOS_JOB_BIN;
  o->lock_bin = CHAOS_LOCK_BIN;
  if (const std::string t = Env("TMPDIR"); !t.empty() && o->tmp_root == "/tmp")
    o->tmp_root = t;
  return true;
}

}  // namespace chaos
