// A test run's own directory, `$TMPDIR/PREFIX-XXXXXX`, for runs that start
// what outlives a SIGKILLed test process: a private PostgreSQL cluster (in
// `DIR/pg`, scripts/pg-cluster.sh), network namespaces. While the run lives
// the directory holds `owner` ("PID START_TIME" of the test process); a
// normal teardown removes it. A run killed outright (ctest's timeout
// SIGKILLs) leaves it behind: the next run sweeps it.
//
// Thread safety: none.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace warden::testing {

// $TMPDIR, else /tmp.
std::string TempRoot();

// Makes `TempRoot()/PREFIX-XXXXXX` (mode 0755: a server running as another
// user reads it) and writes its owner file; "" (and *error) on failure.
std::string MakeRunDir(const std::string& prefix, std::string* error);
void RemoveOwner(const std::string& run_dir);

// For each `TempRoot()/PREFIX-*` whose owner is provably gone: stops its
// private cluster (`DIR/pg`), calls `also(dir, owner_pid)` (namespaces to
// delete, say), and removes the directory. Returns the directories swept.
std::vector<std::string> SweepOrphanedRuns(
    const std::string& prefix,
    const std::function<void(const std::string& dir, pid_t owner)>& also = nullptr);

}  // namespace warden::testing
