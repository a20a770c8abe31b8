// Building blocks of the partition test (and of the chaos runner's
// partitions): a private network of namespaces whose links the test can
// cut, and a private PostgreSQL cluster that lives on that network. Child
// processes (inside a namespace or not) come from the support library
// (tests/support/child_process.h).
//
// Everything here cleans up after itself (destructors), so a test that fails
// an assertion half-way still leaves no namespace or cluster behind.
//
// Thread safety: none, except NowMs (any thread).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "child_process.h"

namespace pt {

using warden::testing::Millis;

// Wall-clock milliseconds since the epoch: the clock of the ledger (`date`),
// of warden's log lines and of the database on this one machine.
int64_t NowMs();
// "2026-11-22T01:02:46.299Z" (warden's log and JSON times) -> epoch ms, or -1.
int64_t ParseTime(const std::string& rfc3339);

// Three network namespaces joined by a bridge:
//
//   wardenA-ID: eth0 10.213.0.2/24 --veth-- vA -+
//                                               +- br0 10.213.0.1/24 in wardenDB-ID
//   wardenB-ID: eth0 10.213.0.3/24 --veth-- vB -+   (PostgreSQL listens here)
//
// Nothing is added to the namespace the test runs in: every address lives
// in a namespace of ours, so the fixed subnet cannot collide with a real
// network or with a concurrent run. Neighbour entries are static, so a cut
// link never turns into ARP failures (and "host unreachable" errors).
//
// Cut(host) disables the host's bridge port: every frame to or from it is
// dropped silently (no RST, no ICMP, carrier stays up on both ends), as in a
// real partition. Heal(host) enables it again.
class Network {
 public:
  enum Side { kA, kB };
  static constexpr const char* kDbAddr = "10.213.0.1";

  Network(std::string ip, std::string bridge, std::string scratch_dir, std::string id);
  ~Network();  // Destroy()
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  // Empty on success, else what failed.
  std::string Create();
  void Destroy();
  std::string Cut(Side side);
  std::string Heal(Side side);

  const std::string& db_ns() const { return db_ns_; }
  const std::string& ns(Side side) const { return side == kA ? a_ns_ : b_ns_; }
  static const char* Addr(Side side) { return side == kA ? "10.213.0.2" : "10.213.0.3"; }
  const std::string& ip() const { return ip_; }
  // Whether Create() made any namespace (false: the kernel refused the first).
  bool any_created() const { return !created_.empty(); }

 private:
  std::string Ip(const std::vector<std::string>& args);  // empty on success
  std::string SetPortState(Side side, const char* state, const char* expect);

  std::string ip_, bridge_, scratch_, db_ns_, a_ns_, b_ns_;
  std::vector<std::string> created_;  // namespaces to delete
};

// A private PostgreSQL cluster (scripts/pg-cluster.sh), started inside the
// database namespace and listening on its loopback and on the bridge
// address. The test reaches it through its unix socket (a file, so namespaces
// do not matter); workers through TCP on the bridge.
class Cluster {
 public:
  Cluster(std::string script, std::string dir, std::string scratch_dir)
      : script_(std::move(script)), dir_(std::move(dir)), scratch_(std::move(scratch_dir)) {}
  ~Cluster();  // Stop()
  std::string Start(const std::string& ip, const std::string& netns, const std::string& listen);
  void Stop();
  // postgresql://postgres@/warden_test?host=DIR&port=PORT
  std::string LocalUrl() const;
  // postgresql://postgres@ADDR:PORT/warden_test
  std::string TcpUrl(const std::string& addr) const;
  const std::string& dir() const { return dir_; }

 private:
  std::string script_, dir_, scratch_;
  int port_ = 0;
  bool started_ = false;
};

// Deletes the namespaces a Network(..., id = the pid of `owner`) made: for
// the leftovers of a run killed outright (warden::testing::SweepOrphanedRuns).
void DeleteNamespacesOf(const std::string& ip, pid_t owner, const std::string& scratch_dir);

}  // namespace pt
