#include "sandbox.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "poll_until.h"
#include "proc.h"

namespace pt {

using warden::testing::CmdResult;
using warden::testing::PollUntil;
using warden::testing::RunInDir;

int64_t NowMs() {
  return std::chrono::duration_cast<Millis>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t ParseTime(const std::string& s) {
  int y, mo, d, h, mi, sec, ms;
  char z;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3d%c", &y, &mo, &d, &h, &mi, &sec, &ms,
                  &z) != 8 ||
      z != 'Z') {
    return -1;
  }
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  return static_cast<int64_t>(timegm(&tm)) * 1000 + ms;
}

// ---- Network ----

Network::Network(std::string ip, std::string bridge, std::string scratch_dir, std::string id)
    : ip_(std::move(ip)),
      bridge_(std::move(bridge)),
      scratch_(std::move(scratch_dir)),
      db_ns_("wardenDB-" + id),
      a_ns_("wardenA-" + id),
      b_ns_("wardenB-" + id) {}

Network::~Network() { Destroy(); }

std::string Network::Ip(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {ip_};
  argv.insert(argv.end(), args.begin(), args.end());
  CmdResult r = RunInDir(argv, scratch_, Millis(20'000));
  if (r.exit_code == 0) return "";
  std::string cmd;
  for (const std::string& a : argv) cmd += a + " ";
  return cmd + "failed: " + r.Describe();
}

std::string Network::Create() {
  // Locally administered MACs, fixed so that the neighbour entries below can
  // name them.
  const char* kMacDb = "02:00:0a:d5:00:01";
  const char* kMacA = "02:00:0a:d5:00:02";
  const char* kMacB = "02:00:0a:d5:00:03";
  for (const std::string& ns : {db_ns_, a_ns_, b_ns_}) {
    // Our names (they carry our pid): one left over by a killed run that
    // had the same pid is stale.
    struct stat st;
    if (::stat(("/run/netns/" + ns).c_str(), &st) == 0) (void)Ip({"netns", "del", ns});
    if (std::string e = Ip({"netns", "add", ns}); !e.empty()) return e;
    created_.push_back(ns);
    if (std::string e = Ip({"-n", ns, "link", "set", "lo", "up"}); !e.empty()) return e;
  }
  const std::vector<std::vector<std::string>> steps = {
      {"-n", db_ns_, "link", "add", "br0", "address", kMacDb, "type", "bridge"},
      {"-n", db_ns_, "addr", "add", std::string(kDbAddr) + "/24", "dev", "br0"},
      {"-n", db_ns_, "link", "set", "br0", "up"},
      // Each veth is made directly inside its two namespaces.
      {"link", "add", "eth0", "netns", a_ns_, "address", kMacA, "type", "veth", "peer", "name",
       "vA", "netns", db_ns_},
      {"link", "add", "eth0", "netns", b_ns_, "address", kMacB, "type", "veth", "peer", "name",
       "vB", "netns", db_ns_},
      {"-n", db_ns_, "link", "set", "vA", "master", "br0"},
      {"-n", db_ns_, "link", "set", "vB", "master", "br0"},
      {"-n", db_ns_, "link", "set", "vA", "up"},
      {"-n", db_ns_, "link", "set", "vB", "up"},
      {"-n", a_ns_, "addr", "add", std::string(Addr(kA)) + "/24", "dev", "eth0"},
      {"-n", b_ns_, "addr", "add", std::string(Addr(kB)) + "/24", "dev", "eth0"},
      {"-n", a_ns_, "link", "set", "eth0", "up"},
      {"-n", b_ns_, "link", "set", "eth0", "up"},
      {"-n", a_ns_, "neigh", "replace", kDbAddr, "lladdr", kMacDb, "dev", "eth0", "nud",
       "permanent"},
      {"-n", b_ns_, "neigh", "replace", kDbAddr, "lladdr", kMacDb, "dev", "eth0", "nud",
       "permanent"},
      {"-n", db_ns_, "neigh", "replace", Addr(kA), "lladdr", kMacA, "dev", "br0", "nud",
       "permanent"},
      {"-n", db_ns_, "neigh", "replace", Addr(kB), "lladdr", kMacB, "dev", "br0", "nud",
       "permanent"},
  };
  for (const auto& step : steps) {
    if (std::string e = Ip(step); !e.empty()) return e;
  }
  // A bridge port forwards once its link is up on both ends.
  for (Side side : {kA, kB}) {
    std::string e;
    PollUntil([&] { return (e = Heal(side)).empty(); }, Millis(5000), Millis(20));
    if (!e.empty()) return e;
  }
  return "";
}

void Network::Destroy() {
  // Deleting a namespace deletes its links (a veth goes with either end,
  // the bridge with the database namespace).
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
    if (std::string e = Ip({"netns", "del", *it}); !e.empty()) {
      std::fprintf(stderr, "[ sandbox  ] %s\n", e.c_str());
    }
  }
  created_.clear();
}

std::string Network::SetPortState(Side side, const char* state, const char* expect) {
  const std::string port = side == kA ? "vA" : "vB";
  CmdResult r = RunInDir({bridge_, "-n", db_ns_, "link", "set", "dev", port, "state", state},
                         scratch_, Millis(10'000));
  if (r.exit_code != 0)
    return "bridge link set dev " + port + " state " + state + ": " + r.Describe();
  // The kernel may accept a state and then override it (a "blocking" port
  // of a bridge without STP is made forwarding again): check.
  r = RunInDir({bridge_, "-n", db_ns_, "link", "show", "dev", port}, scratch_, Millis(10'000));
  if (r.out.find(std::string("state ") + expect) == std::string::npos) {
    return "bridge port " + port + " is not " + expect + ": " + r.Describe();
  }
  return "";
}

std::string Network::Cut(Side side) { return SetPortState(side, "0", "disabled"); }
std::string Network::Heal(Side side) { return SetPortState(side, "3", "forwarding"); }

// ---- Cluster ----

Cluster::~Cluster() { Stop(); }

std::string Cluster::Start(const std::string& ip, const std::string& netns,
                           const std::string& listen) {
  CmdResult r = RunInDir({ip, "netns", "exec", netns, script_, "start", dir_}, scratch_,
                         Millis(120'000), {"PG_CLUSTER_LISTEN_EXTRA=" + listen});
  started_ = true;  // stop even a half-started server
  if (r.exit_code != 0) return "pg-cluster.sh start failed: " + r.Describe();
  port_ = std::atoi(proc::ReadFile(dir_ + "/port").c_str());
  if (port_ <= 0) return "pg-cluster.sh start left no port file in " + dir_;
  return "";
}

void Cluster::Stop() {
  if (!started_) return;
  started_ = false;
  CmdResult r = RunInDir({script_, "stop", dir_}, scratch_, Millis(120'000));
  if (r.exit_code != 0) {
    std::fprintf(stderr, "[ sandbox  ] pg-cluster.sh stop failed: %s\n", r.Describe().c_str());
  }
}

std::string Cluster::LocalUrl() const {
  return "postgresql://postgres@/warden_test?host=" + dir_ + "&port=" + std::to_string(port_);
}

std::string Cluster::TcpUrl(const std::string& addr) const {
  return "postgresql://postgres@" + addr + ":" + std::to_string(port_) + "/warden_test";
}

// ---- leftovers of killed runs ----

void DeleteNamespacesOf(const std::string& ip, pid_t owner, const std::string& scratch_dir) {
  for (const char* prefix : {"wardenA-", "wardenB-", "wardenDB-"}) {
    const std::string ns = prefix + std::to_string(owner);
    if (access(("/run/netns/" + ns).c_str(), F_OK) == 0) {
      (void)RunInDir({ip, "netns", "del", ns}, scratch_dir, Millis(20'000));
    }
  }
}

}  // namespace pt
