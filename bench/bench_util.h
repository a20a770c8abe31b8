// Helpers shared by the benchmark programs: clocks, options, child
// processes, fresh stores, and the JSON lines every scenario prints.
//
// Every scenario prints one JSON object per run on stdout (bench/aggregate.py
// reads them); progress and errors go to stderr.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace bench {

using Json = nlohmann::json;

// Wall clock in microseconds since the epoch: enqueue and start times are
// compared across processes on one host.
int64_t WallMicros();
double SecondsSince(std::chrono::steady_clock::time_point t0);

// Peak resident set of this process, MiB (getrusage ru_maxrss).
double PeakRssMib();

// `--key value` pairs; a bare `--flag` maps to "1".
class Args {
 public:
  Args(int argc, char** argv, int first);
  std::string Str(const std::string& key, const std::string& def) const;
  int64_t Int(const std::string& key, int64_t def) const;
  bool Has(const std::string& key) const { return values_.count(key) > 0; }

 private:
  std::map<std::string, std::string> values_;
};

bool IsPostgres(const std::string& url);

// Empties the store so a run starts fresh: removes the SQLite file (and its
// -wal, -shm) or drops the PostgreSQL schema `warden`. Returns false (and
// says why on stderr) on failure.
bool ResetStore(const std::string& url);

// Writes back what an enqueue left for later, so that it is not charged to
// the measurement that follows, or not, at random: on PostgreSQL a
// CHECKPOINT (a big insert leaves dirty pages behind, and its WAL volume
// starts a checkpoint that may or may not overlap the measurement). SQLite
// needs nothing: each commit checkpoints the WAL once it passes 1000 pages.
bool SettleStore(const std::string& url);

// Starts this program again (/proc/self/exe) with `args`; its stdout is
// readable on *out_fd.
pid_t SpawnSelf(const std::vector<std::string>& args, int* out_fd);
// Reads a child's stdout until EOF.
std::string ReadAll(int fd);
// Reads one line (without the newline); empty at EOF.
std::string ReadLine(int fd);
// Waits for the child; true if it exited 0.
bool WaitOk(pid_t pid);

// Prints one result line: `base` plus the scenario's numbers.
void Emit(const Json& line);

// Counts jobs in state `state` (warden's own view, via the Client).
int64_t CountState(const std::string& url, const std::string& state);

}  // namespace bench
