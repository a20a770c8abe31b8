#include "backend_setup.h"

#include <fmt/core.h>
#include <unistd.h>

#include "ledger.h"
#include "store_faults.h"

namespace chaos {

using warden::testing::CmdResult;
using warden::testing::FindTool;
using warden::testing::Host;
using warden::testing::RunInDir;

BackendSetup::~BackendSetup() { Teardown(); }

std::string BackendSetup::name() const {
  if (sqlite_) return "sqlite";
  if (network_)
    return "postgres (private cluster, workers on two network namespaces)";
  if (!private_dir_.empty()) return "postgres (private cluster)";
  return "postgres";
}

std::string BackendSetup::kept_database() const {
  if (!created_db_) return "";
  if (private_dir_.empty() && !cluster_) return runner_url_;
  // A private cluster is stopped, its data directory kept in the run
  // directory: `pg-cluster.sh restart DIR` brings it back.
  return "database " + db_name_ + " in the stopped cluster " +
         target_.cluster_dir;
}

std::string BackendSetup::Setup(const Options& o, const std::string& dir,
                                int slots) {
  scratch_ = dir;
  script_ = o.cluster_script;
  if (o.backend == Backend::kSqlite) {
    sqlite_ = true;
    runner_url_ = worker_url_ = o.db == "sqlite" ? dir + "/chaos.db" : o.db;
    target_.sqlite_path = runner_url_;
    return "";
  }
  return SetupPostgres(o, dir, slots);
}

std::string BackendSetup::SetupPostgres(const Options& o,
                                        const std::string& dir, int slots) {
  std::string server_url = o.db;
  if (o.partition) {
    auto ip = FindTool("ip");
    auto bridge = FindTool("bridge");
    if (!ip || !bridge)
      return "--partition needs the `ip` and `bridge` tools (iproute2)";
    target_.ip_tool = *ip;
    network_ = std::make_unique<pt::Network>(*ip, *bridge, dir,
                                             std::to_string(getpid()));
    if (std::string e = network_->Create(); !e.empty())
      return "network namespaces: " + e;
    cluster_ = std::make_unique<pt::Cluster>(script_, dir + "/pg", dir);
    if (std::string e = cluster_->Start(
            *ip, network_->db_ns(), std::string(pt::Network::kDbAddr) + "/24");
        !e.empty()) {
      return e;
    }
    server_url = cluster_->LocalUrl();
    target_.cluster_netns = network_->db_ns();
    target_.cluster_script = script_;
    target_.cluster_dir = cluster_->dir();
    target_.network = network_.get();
    for (int s = 0; s < slots; ++s) {
      const int side = s % 2;
      target_.side_of_slot.push_back(side);
      hosts_.push_back(
          Host{network_->ns(side == 0 ? pt::Network::kA : pt::Network::kB),
               side == 0 ? "chaos-host-a" : "chaos-host-b"});
    }
  } else if (o.pg_private) {
    private_dir_ = dir + "/pg";
    CmdResult r =
        RunInDir({script_, "start", private_dir_}, dir, Millis(180'000));
    if (r.exit_code != 0) return "pg-cluster.sh start failed: " + r.Describe();
    server_url = r.out.substr(0, r.out.find('\n'));
    target_.cluster_script = script_;
    target_.cluster_dir = private_dir_;
  } else if (!o.pg_cluster.empty()) {
    target_.cluster_script = script_;
    target_.cluster_dir = o.pg_cluster;
  }
  admin_url_ = WithDatabase(server_url, "postgres");
  db_name_ = fmt::format("chaos_{}_{}", getpid(), WallMs() % 1'000'000'000);
  if (std::string e = CreateDatabase(admin_url_, db_name_); !e.empty()) {
    return "CREATE DATABASE on " + admin_url_ + ": " + e;
  }
  created_db_ = true;
  runner_url_ = WithDatabase(server_url, db_name_);
  worker_url_ =
      network_ ? WithDatabase(cluster_->TcpUrl(pt::Network::kDbAddr), db_name_)
               : runner_url_;
  target_.pg_admin_url = admin_url_;
  target_.pg_db = db_name_;
  return "";
}

void BackendSetup::Teardown(bool keep) {
  if (torn_down_) return;
  torn_down_ = true;
  if (created_db_ && !keep) DropDatabase(admin_url_, db_name_);
  created_db_ = created_db_ && keep;
  if (!private_dir_.empty()) {
    (void)RunInDir({script_, "stop", private_dir_}, scratch_, Millis(120'000));
    private_dir_.clear();
  }
  cluster_.reset();
  network_.reset();
}

}  // namespace chaos
