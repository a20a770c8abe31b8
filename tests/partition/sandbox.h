// Building blocks of the partition test: child processes (optionally inside
// a network namespace, with a host name of their own), a private network of
// namespaces whose links the test can cut, and a private PostgreSQL cluster
// that lives on that network.
//
// Everything here cleans up after itself (destructors), so a test that fails
// an assertion half-way still leaves no namespace, cluster or process behind.
//
// Thread safety: none, except GroupAlive and NowMs (any thread).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "proc.h"

namespace pt {

using Millis = std::chrono::milliseconds;

// Wall-clock milliseconds since the epoch: the clock of the ledger (`date`),
// of warden's log lines and of the database on this one machine.
int64_t NowMs();
// "2026-11-22T01:02:46.299Z" (warden's log and JSON times) -> epoch ms, or -1.
int64_t ParseTime(const std::string& rfc3339);

bool WaitFor(const std::function<bool()>& cond, Millis timeout, Millis every = Millis(20));
using proc::ReadFile;
// An executable by name: PATH first, then the sbin directories (ctest may run
// without them in PATH).
std::optional<std::string> FindTool(const std::string& name);

struct CmdResult {
  int exit_code = -1;  // 128+signal if killed; -1 if it could not run
  std::string out, err;
  std::string Describe() const;  // exit code and both outputs, for messages
};

// Runs argv to completion (SIGKILL after `timeout`), with stdout and stderr
// captured through files in `scratch_dir`, stdin from /dev/null and `env`
// ("K=V") added to ours.
CmdResult Run(const std::vector<std::string>& argv, const std::string& scratch_dir, Millis timeout,
              const std::vector<std::string>& env = {});

// Where a child runs: a network namespace (/run/netns/NAME, as `ip netns
// exec` enters it) and a UTS namespace of its own with this host name, so
// two children on one machine look like two hosts to warden (which proves a
// peer dead by pid only on the peer's own host).
struct Host {
  std::string netns;
  std::string hostname;
};

// A long-running child with stdout/stderr in files. It is SIGKILLed if this
// process dies (PR_SET_PDEATHSIG), so a test killed outright leaves no worker
// running.
class Child {
 public:
  static std::unique_ptr<Child> Spawn(const std::vector<std::string>& argv,
                                      const std::string& out_path, const std::string& err_path,
                                      const std::optional<Host>& host = std::nullopt);
  ~Child();  // SIGKILL and reap if still running
  pid_t pid() const { return pid_; }
  bool Signal(int sig);
  void Kill();
  bool Exited();
  bool WaitExit(Millis timeout);
  int ExitCode() const;  // exit status, 128+signal, -1 if unknown
  std::string Stdout() const { return ReadFile(out_path_); }
  std::string Stderr() const { return ReadFile(err_path_); }

 private:
  Child() = default;
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  std::string out_path_, err_path_;
};

// Reaps every exited child of this process (we are a child subreaper, so
// orphaned job processes come to us) and keeps the statuses of those a Child
// will ask about.
void ReapChildren();
// SIGKILLs every descendant of this process until none runs.
void KillAllDescendants();
// Whether any process of process group `pgid` is still running (zombies do
// not count). Safe from any thread.
bool GroupAlive(pid_t pgid);

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

// A run's directory is `<tmp>/warden-pt-XXXXXX`; while the run lives it holds
// `owner` ("PID START_TIME" of the test process), removed by a normal
// teardown. A run killed outright (ctest's timeout SIGKILLs) leaves it, its
// PostgreSQL server and its namespaces behind: this stops and deletes those
// of runs whose owner is gone. Returns the directories cleaned.
void WriteOwner(const std::string& dir);
std::vector<std::string> SweepStaleRuns(const std::string& tmp_root, const std::string& ip,
                                        const std::string& cluster_script,
                                        const std::string& scratch_dir);

}  // namespace pt
