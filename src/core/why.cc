#include "warden/why.h"

#include <algorithm>
#include <map>
#include <set>

#include "warden/backlog.h"
#include "warden/duration.h"
#include "warden/flow.h"
#include "warden/plural.h"
#include "warden/worker_silence.h"

namespace warden {
namespace {

std::string In(TimeMs t, TimeMs now) {
  return t > now ? "in " + FormatDuration(Millis(t - now)) : "now";
}

std::string WorkerLabel(const WhyFacts& f, WorkerId id) {
  for (const WorkerInfo& w : f.live_workers) {
    if (w.id == id && !w.name.empty()) return w.name;
  }
  return "worker " + std::to_string(id);
}

// A waiting job's queue at its concurrency limit, or its rate window full.
void AddFlowReasons(const WhyFacts& f, std::vector<WhyReason>* out) {
  const JobInfo& j = f.job;
  const QueueFlow& flow = *f.queue_flow;
  if (flow.limits.concurrency && flow.running >= *flow.limits.concurrency) {
    std::string held;
    Json holders = Json::array();
    for (const auto& [id, worker] : flow.holders) {
      if (holders.size() < 5) {
        held += (held.empty() ? "" : ", ") + std::to_string(id) + " (" + WorkerLabel(f, worker) +
                ")";
      }
      holders.push_back({{"id", id}, {"worker", worker}});
    }
    if (flow.running > 5) held += ", ...";
    out->push_back({"queue_concurrency_limit",
                    "its queue " + j.queue + " is at its concurrency limit: " +
                        std::to_string(flow.running) + " of " +
                        std::to_string(*flow.limits.concurrency) +
                        " running (jobs " + held + "); the next starts when one ends",
                    {{"queue", j.queue},
                     {"concurrency", *flow.limits.concurrency},
                     {"running", flow.running},
                     {"holders", holders}}});
  }
  if (flow.limits.rate && flow.next_start_at) {
    const RateLimit& r = *flow.limits.rate;
    out->push_back({"queue_rate_limit",
                    "its queue " + j.queue + " is at its rate limit " + FormatRate(r) + ": " +
                        std::to_string(flow.recent_starts) + " started in the last " +
                        FormatDuration(r.per) + "; the next may start at " +
                        FormatTime(*flow.next_start_at) + " (" + In(*flow.next_start_at, f.now) +
                        ")",
                    {{"queue", j.queue},
                     {"rate", FormatRate(r)},
                     {"recent_starts", flow.recent_starts},
                     {"next_start_at", FormatTime(*flow.next_start_at)}}});
  }
}

// A running job's worker, when it is silent (warden/worker_silence.h).
void AddSilentWorker(const WhyFacts& f, std::vector<WhyReason>* out) {
  const JobInfo& j = f.job;
  for (const WorkerInfo& w : f.live_workers) {
    if (!j.worker || w.id != *j.worker || !w.silent_for) continue;
    out->push_back({"worker_silent",
                    "its worker " + w.name + " is silent: " + SilenceText(w) +
                        "; if it is gone, the job comes back when recovery finds its lease "
                        "silent",
                    {{"worker", w.id},
                     {"worker_name", w.name},
                     {"silent_for_ms", w.silent_for->count()},
                     {"keepalive_ms", w.keepalive.count()}}});
  }
}

const NodeInfo* FindNode(const WhyFacts& f, const std::string& name) {
  for (const NodeInfo& n : f.nodes) {
    if (n.name == name && n.registered) return &n;
  }
  return nullptr;
}

// What the workers that could run a waiting job have room for.
struct ServedBy {
  int free_slots = 0;  // on claiming workers, within their nodes' capacities
  Json workers = Json::array();
};

// The reasons that come from the workers that could run the job: none
// claiming (none at all, only draining, only silent, only on nodes that
// take no work), or every one busy (its slots, or its node's capacity).
ServedBy ServeWorkers(const WhyFacts& f, bool command, std::vector<WhyReason>* out) {
  const JobInfo& j = f.job;
  ServedBy r;
  int active = 0, draining = 0, slots = 0, on_open_nodes = 0;
  std::vector<const WorkerInfo*> silent;
  std::set<std::string> closed;  // nodes that take no work
  std::map<std::string, int> node_free;  // free worker slots on each node
  for (const WorkerInfo& w : f.live_workers) {
    if (!CanRun(ServingOf(w), j.queue, j.task, command)) continue;
    if (w.silent_for) {
      silent.push_back(&w);
    } else if (w.node_disabled) {
      closed.insert(w.node);
    } else if (w.state == WorkerState::kDraining) {
      ++draining;
    } else if (w.state == WorkerState::kActive) {
      ++active;
      slots += w.concurrency;
      node_free[w.node] += std::max(0, w.concurrency - w.running);
      r.workers.push_back({{"id", w.id}, {"name", w.name}, {"node", w.node},
                           {"running", w.running}, {"concurrency", w.concurrency}});
    }
  }
  std::string full_text;
  Json full = Json::array();
  for (const auto& [name, free] : node_free) {
    const NodeInfo* n = FindNode(f, name);
    if (n && n->capacity) {
      const int64_t room = std::max<int64_t>(0, *n->capacity - n->running);
      if (room == 0) {
        full_text += (full_text.empty() ? "node " : "; node ") + name + " runs " +
                     std::to_string(n->running) + " of its capacity " +
                     std::to_string(*n->capacity);
        full.push_back({{"node", name}, {"running", n->running}, {"capacity", *n->capacity}});
        continue;
      }
      r.free_slots += static_cast<int>(std::min<int64_t>(free, room));
    } else {
      r.free_slots += free;
    }
    ++on_open_nodes;
  }
  if (active == 0) {
    Json evidence = {{"queue", j.queue}, {"task", j.task}, {"command", command},
                     {"draining_workers", draining}};
    if (!closed.empty()) {
      std::string fixes;
      Json nodes = Json::array();
      for (const std::string& name : closed) {
        const NodeInfo* n = FindNode(f, name);
        const bool removed = n && !n->present;
        fixes += std::string(fixes.empty() ? "" : " or ") +
                 (removed ? "warden nodes add " : "warden nodes enable ") + name;
        nodes.push_back({{"node", name}, {"state", removed ? "removed" : "disabled"}});
      }
      out->push_back({"node_disabled", "no worker on an enabled node serves it; " + fixes,
                      {{"queue", j.queue}, {"task", j.task}, {"command", command},
                       {"nodes", nodes}}});
    }
    if (!silent.empty()) {
      std::string names;
      Json workers = Json::array();
      for (const WorkerInfo* w : silent) {
        if (workers.size() < 5) {
          names += (names.empty() ? "" : ", ") + w->name + " (" + SilenceText(*w) + ")";
        }
        workers.push_back({{"id", w->id},
                           {"name", w->name},
                           {"silent_for_ms", w->silent_for->count()},
                           {"keepalive_ms", w->keepalive.count()}});
      }
      if (silent.size() > 5) names += ", ...";
      out->push_back({"only_silent_workers",
                      "only silent workers serve it: " + names +
                          "; they claim nothing until they heartbeat again",
                      {{"queue", j.queue}, {"workers", workers}}});
    }
    if (draining > 0) {
      out->push_back({"only_draining_workers",
                      "only draining workers serve it (" + Plural(draining, "worker") +
                          "): they claim nothing more",
                      evidence});
    }
    if (closed.empty() && silent.empty() && draining == 0) {
      out->push_back({"no_worker_serves",
                      "no active worker serves it: none listens on queue " + j.queue +
                          (command ? " and runs command jobs (--allow-cmd)"
                                   : " with a handler or --task for " + j.task),
                      evidence});
    }
    return r;
  }
  if (r.free_slots > 0) return r;
  if (!full.empty()) {
    out->push_back({"node_capacity_full", full_text + ": the next starts when one there ends",
                    {{"nodes", full}}});
  }
  if (on_open_nodes > 0) {
    out->push_back({"slots_busy",
                    "every slot of the " + Plural(active, "worker") +
                        " that serve it is busy (" + std::to_string(slots) + " running)",
                    {{"workers", r.workers}, {"slots", slots}}});
  }
  return r;
}

}  // namespace

std::vector<WhyReason> WhyNotRunning(const WhyFacts& f) {
  const JobInfo& j = f.job;
  std::vector<WhyReason> out;
  if (j.state == JobState::kRunning) {
    out.push_back({"running",
                   "it is running on worker " +
                       (j.worker_name.empty() ? std::to_string(j.worker.value_or(0))
                                              : j.worker_name) +
                       ", attempts " + AttemptsText(j),
                   {{"worker", j.worker ? Json(*j.worker) : Json()},
                    {"worker_name", j.worker_name},
                    {"attempt", j.attempt},
                    {"charged_attempts", j.charged},
                    {"max_attempts", j.max_attempts},
                    {"lease_token", j.lease_token},
                    {"lease_expires_at",
                     j.lease_expires_at ? Json(FormatTime(*j.lease_expires_at)) : Json()}}});
    AddSilentWorker(f, &out);
    return out;
  }
  if (IsTerminal(j.state)) {
    std::string message = std::string("it has finished: ") + JobStateName(j.state);
    if (j.last_error) message += std::string(" (last error: ") + ErrorKindName(*j.last_error) + ")";
    message += ", attempts " + AttemptsText(j);
    if (j.state != JobState::kSucceeded) message += "; `warden jobs retry` runs it again";
    out.push_back({"finished", message,
                   {{"state", JobStateName(j.state)},
                    {"attempt", j.attempt},
                    {"charged_attempts", j.charged},
                    {"max_attempts", j.max_attempts},
                    {"last_error", j.last_error ? Json(ErrorKindName(*j.last_error)) : Json()},
                    {"finished_at", j.finished_at ? Json(FormatTime(*j.finished_at)) : Json()}}});
    return out;
  }
  // Waiting: scheduled, available or retryable.
  if (j.state == JobState::kScheduled && j.run_at > f.now) {
    out.push_back({"scheduled", "it is scheduled for " + FormatTime(j.run_at) + " (" +
                                    In(j.run_at, f.now) + ")",
                   {{"run_at", FormatTime(j.run_at)}}});
  }
  if (j.state == JobState::kRetryable && j.run_at > f.now) {
    std::string message = "it is backing off after attempt " + std::to_string(j.attempt);
    if (j.last_error) message += std::string(" failed (") + ErrorKindName(*j.last_error) + ")";
    message += ", attempts " + AttemptsText(j);
    message += "; it retries at " + FormatTime(j.run_at) + " (" + In(j.run_at, f.now) + ")";
    out.push_back({"backing_off", message,
                   {{"run_at", FormatTime(j.run_at)},
                    {"attempt", j.attempt},
                    {"charged_attempts", j.charged},
                    {"max_attempts", j.max_attempts},
                    {"last_error", j.last_error ? Json(ErrorKindName(*j.last_error)) : Json()},
                    {"last_error_message", j.last_error_message}}});
  }
  if (j.start_deadline_at && *j.start_deadline_at < f.now) {
    out.push_back({"start_deadline_passed",
                   "its start deadline passed at " + FormatTime(*j.start_deadline_at) +
                       ": it will not start, and the next sweep expires it",
                   {{"start_deadline_at", FormatTime(*j.start_deadline_at)}}});
  }
  if (f.queue_paused_at) {
    out.push_back({"queue_paused",
                   "its queue " + j.queue + " is paused (since " + FormatTime(*f.queue_paused_at) +
                       "): `warden queues resume " + j.queue + "`",
                   {{"queue", j.queue}, {"paused_at", FormatTime(*f.queue_paused_at)}}});
  }
  if (f.queue_flow) AddFlowReasons(f, &out);
  if (f.key_holder) {
    out.push_back({"concurrency_key_held",
                   "its concurrency key " + j.concurrency_key + " is held by running job " +
                       std::to_string(*f.key_holder),
                   {{"concurrency_key", j.concurrency_key}, {"held_by", *f.key_holder}}});
  }
  if (j.avoid_node_until && *j.avoid_node_until > f.now) {
    // Not a hold on the job, only on one node's workers: `claimable` may
    // still be said (core/node_preference.h).
    out.push_back({"avoids_node",
                   "its last attempt was lost or crashed on node " + j.avoid_node +
                       ": workers there leave it to other nodes until " +
                       FormatTime(*j.avoid_node_until) + " (" + In(*j.avoid_node_until, f.now) +
                       ")",
                   {{"node", j.avoid_node}, {"until", FormatTime(*j.avoid_node_until)}}});
  }
  const bool command = !j.command.empty();
  const ServedBy serving = ServeWorkers(f, command, &out);
  const bool only_avoids = out.size() == 1 && out[0].code == "avoids_node";
  if (out.empty() || (only_avoids && serving.free_slots > 0)) {
    out.push_back({"claimable",
                   "nothing holds it back: a serving worker with a free slot claims it next "
                   "(jobs of higher priority, or older, go first)",
                   {{"free_slots", serving.free_slots}, {"workers", serving.workers}}});
  }
  return out;
}

}  // namespace warden
