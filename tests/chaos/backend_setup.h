// Where a chaos run stores its jobs: a fresh SQLite file, a fresh database
// on a given PostgreSQL server, or a private cluster (optionally inside
// network namespaces, with the workers on two "hosts" whose links can be
// cut). Sets up what the injector needs to fault the store, and tears it
// all down afterwards.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "injector.h"
#include "options.h"
#include "sandbox.h"

namespace chaos {

class BackendSetup {
 public:
  BackendSetup() = default;
  ~BackendSetup();  // Teardown()
  BackendSetup(const BackendSetup&) = delete;
  BackendSetup& operator=(const BackendSetup&) = delete;

  // "" on success, else what failed. `slots`: worker slots (partition mode
  // puts them on two hosts, alternately).
  std::string Setup(const Options& o, const std::string& dir, int slots);
  // Drops the database / stops the cluster / deletes the namespaces. With
  // `keep`, the database is left for inspection (in a private cluster's
  // data directory, the cluster stopped).
  void Teardown(bool keep = false);

  std::string name() const;  // "sqlite", "postgres", ...
  const std::string& runner_url() const { return runner_url_; }
  const std::string& worker_url() const { return worker_url_; }
  const StoreTarget& target() const { return target_; }
  const std::vector<std::optional<warden::testing::Host>>& hosts() const {
    return hosts_;
  }
  std::string kept_database() const;  // for the report after a kept run

 private:
  std::string SetupPostgres(const Options& o, const std::string& dir,
                            int slots);

  bool sqlite_ = false;
  std::string runner_url_, worker_url_;
  StoreTarget target_;
  std::string admin_url_, db_name_;
  bool created_db_ = false;
  bool torn_down_ = false;
  std::string private_dir_;  // a cluster we started with pg-cluster.sh start
  std::string script_, scratch_;
  std::unique_ptr<pt::Network> network_;
  std::unique_ptr<pt::Cluster> cluster_;
  std::vector<std::optional<warden::testing::Host>> hosts_;
};

}  // namespace chaos
