// The chaos ledger: what really ran, written by the jobs themselves outside
// the job table, so the checker can compare the store's story with the
// truth.
//
// One line per event, appended with a single write() on an O_APPEND file,
// so lines from concurrent processes never interleave:
//
//   EVENT JOB ATTEMPT TOKEN MS PID WORKER STEP DETAIL
//
//   EVENT   start | tick | ckpt | end
//   MS      CLOCK_REALTIME in ms (every process is on this one host, so the
//           store's times, the runner's fault times and these compare);
//           for `start`, when the job's code began (handler entry, main)
//   PID     the process that ran it (the job's process for command jobs,
//           the worker's for in-process handlers)
//   WORKER  the warden worker id that claimed it
//   STEP    start: the checkpoint step it resumed from; tick: the step just
//           done; ckpt: the step saved (in-process: committed; command:
//           sent to the worker); end: the last step done
//   DETAIL  end: ok | fail | term | stopped | fenced; otherwise "-"
//
// A run is identified by (JOB, TOKEN): every claim gets a fresh lease token.
//
// Thread safety: LedgerWriter::Write may be called from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace chaos {

int64_t WallMs();  // CLOCK_REALTIME, ms

struct RunId {
  int64_t job = 0;
  int attempt = 0;
  int64_t token = 0;
  int64_t worker = 0;
};

class LedgerWriter {
 public:
  // Opens (creates) `path` for appending; aborts the process if it cannot:
  // a job that cannot record what it does must not run.
  explicit LedgerWriter(const std::string& path);
  ~LedgerWriter();
  LedgerWriter(const LedgerWriter&) = delete;
  LedgerWriter& operator=(const LedgerWriter&) = delete;

  // `at_ms`: the line's time (wall ms); 0: now.
  void Write(const char* event, const RunId& run, int step,
             const char* detail = "-", int64_t at_ms = 0);

 private:
  int fd_ = -1;
};

struct LedgerEvent {
  std::string event;
  int64_t job = 0;
  int attempt = 0;
  int64_t token = 0;
  int64_t ms = 0;
  int pid = 0;
  int64_t worker = 0;
  int step = 0;
  std::string detail;
};

// Every complete line of the file (a torn last line is skipped).
std::vector<LedgerEvent> ReadLedger(const std::string& path);

}  // namespace chaos
