// warden demo: a self-contained crash-recovery demonstration.
//
// On a fresh SQLite file in a temporary directory (or, given a PostgreSQL
// URL, on a queue of its own in that database) it enqueues a few hundred
// command jobs (some at-most-once, some sharing a concurrency key), starts
// three worker processes, SIGKILLs one mid-job, SIGSTOPs another past its
// lease and SIGCONTs it, waits for every job to finish, and reports what
// was rescued, how fast, what fencing refused, and whether the invariants
// of docs/design.md hold.
//
// A program of its own that the `warden` command runs (`warden demo`,
// src/cli/cmd_demo.cc): it reads and writes the queue through the public
// Client only, and its workers are that same binary's `worker` command
// (/proc/self/exe), so it runs only inside `warden`. It reports failures
// the way its host program does (Host).
//
// Thread safety: call Run from a process with no other thread: it sets
// WARDEN_DB in its own environment before forking each worker.
#pragma once

#include <functional>
#include <string>

#include "warden/warden.h"

namespace warden::demo {

struct Options {
  int jobs = 300;
  bool keep = false;   // keep the temporary directory, even when all is well
  bool json = false;   // the story on stderr, one JSON document on stdout
  std::string pg_url;  // run on this PostgreSQL database; empty: a fresh SQLite file
};

// How the host program reports. `fail` prints a failure and returns the
// exit status for it; `print_json` prints the --json report, the last
// thing Run prints. `log`, when set (`warden demo --log-format json`),
// takes the story instead of stdout (stderr with --json): each of its
// lines, leading blanks trimmed, empty ones left out, at level error for a
// failed invariant and info for the rest.
struct Host {
  std::function<int(const Status&)> fail;
  std::function<void(const Json&)> print_json;
  std::function<void(LogLevel, const std::string&)> log;
};

// Runs the demo to its end; returns the exit status: 0 when every
// invariant held, 1 when one did not, or `fail`'s for an error.
[[nodiscard]] int Run(const Options& options, const Host& host);

}  // namespace warden::demo
