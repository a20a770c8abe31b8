// The node faults' registry changes (docs/nodes.md: disable, enable,
// remove, add, sync, `--force`), carried out on a thread of its own, one at
// a time in the order posted, with a client of its own: a store fault that
// blocks one must not delay the other faults' timing (as for the feeder
// and the sampler). A change that fails on a store error (transient) is
// tried again every 100 ms: each of them is idempotent, so one whose
// commit's outcome was lost is simply found done. A refusal is not.
//
// Thread safety: Post, TakeDone and Idle from one thread (the injector's).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "warden/client.h"

namespace chaos {

class NodeAdmin {
 public:
  // What a change did.
  struct Outcome {
    std::string detail;
    int workers_released = 0;  // `--force`
    int64_t jobs_recovered = 0;
  };
  // Makes the change; on success says what it did in *out.
  using Op = std::function<warden::Status(warden::Client&, Outcome* out)>;
  struct Done {
    int ticket = 0;
    bool ok = false;
    int64_t sent_ms = 0;  // wall ms: its first try began
    int64_t done_ms = 0;  // wall ms: the try that succeeded (or the last) returned
    int tries = 0;
    std::string detail;  // the op's, or the last error
    Outcome outcome;     // when ok
  };

  explicit NodeAdmin(std::string db_url);
  ~NodeAdmin();  // waits for the op under way
  // Queues `op`; `give_up_ms` after its first try it stops trying (0:
  // never, until the destructor). Returns its ticket.
  int Post(Op op, int64_t give_up_ms);
  // The ops finished since the last call.
  std::vector<Done> TakeDone();
  bool Idle();

 private:
  struct Pending {
    int ticket = 0;
    Op op;
    int64_t give_up_ms = 0;
  };
  void Loop();

  std::string db_url_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> queue_;
  std::vector<Done> done_;
  bool busy_ = false;
  bool stop_ = false;
  int next_ticket_ = 0;
  std::thread thread_;
};

}  // namespace chaos
