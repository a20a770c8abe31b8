// The routes of the HTTP API v1 (docs/http-api.md): each checks the
// caller's scope, reads its parameters strictly (an unknown or malformed
// parameter is a 400 naming it, never ignored), calls the public API and
// answers with the JSON of warden/json_view.h.
#include <charconv>
#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "server/api.h"
#include "server/api_nodes.h"
#include "server/op_bodies.h"
#include "warden/backlog.h"
#include "warden/bulk.h"
#include "warden/duration.h"
#include "warden/flow.h"
#include "warden/job_json.h"
#include "warden/json_view.h"
#include "warden/lists.h"
#include "warden/text.h"

namespace warden::server {
namespace {

// The query parameters of one request, each allowed name read at most once.
class Params {
 public:
  Params(const Request& req, std::set<std::string> allowed) {
    for (const auto& [name, value] : req.query) {
      if (!allowed.count(name)) {
        error_ = "unknown query parameter '" + OneLine(name, 40) + "'";
        return;
      }
      values_[name].push_back(value);
    }
  }
  const std::string& error() const { return error_; }
  std::vector<std::string> All(const std::string& name) const {
    std::vector<std::string> out;
    auto it = values_.find(name);
    if (it == values_.end()) return out;
    for (const std::string& v : it->second) {
      for (const std::string& part : SplitList(v)) out.push_back(part);
    }
    return out;
  }
  std::string One(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() || it->second.empty() ? "" : it->second.back();
  }
  Result<int64_t> Int(const std::string& name, int64_t fallback, int64_t min, int64_t max) const {
    const std::string text = One(name);
    if (text.empty()) return fallback;
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || v < min || v > max) {
      return InvalidArgument("query parameter '" + name + "' must be an integer from " +
                             std::to_string(min) + " to " + std::to_string(max) + ", not '" +
                             OneLine(text, 40) + "'");
    }
    return v;
  }
  Result<bool> Bool(const std::string& name) const {
    const std::string text = One(name);
    if (text.empty() || text == "false" || text == "0") return false;
    if (text == "true" || text == "1") return true;
    return InvalidArgument("query parameter '" + name + "' must be true or false");
  }

 private:
  std::map<std::string, std::vector<std::string>> values_;
  std::string error_;
};

Result<JobId> JobIdIn(const std::string& segment) {
  JobId id = 0;
  const auto [end, ec] = std::from_chars(segment.data(), segment.data() + segment.size(), id);
  if (ec != std::errc() || end != segment.data() + segment.size() || id <= 0) {
    // Appended, not "'" + text: g++ 12 warns falsely (-Wrestrict) once
    // this is inlined into Route.
    std::string message(1, '\'');
    message += OneLine(segment, 40);
    return InvalidArgument(message + "' is not a job id");
  }
  return id;
}

Response Forbidden(const Api::Caller& caller, Scope needed) {
  return ErrorResponse(403, "forbidden",
                       "this needs a token with scope " + std::string(ScopeName(needed)) +
                           " or above; " + caller.actor + " has " + ScopeName(caller.scope));
}

Response MethodNotAllowed(const std::string& allow) {
  Response r = ErrorResponse(405, "method_not_allowed", "this route takes " + allow);
  r.headers.emplace_back("Allow", allow);
  return r;
}

template <typename T>
Response Answer(const Result<T>& r, const std::function<Json(const T&)>& to_json) {
  if (!r.has_value()) return ErrorResponse(r.error());
  return JsonResponse(to_json(*r));
}

// A filter's query parameters (GET /v1/jobs), read as the JSON filter of
// POST /v1/jobs/bulk is (JobFilterFromJson): one set of rules for both.
Result<JobFilter> FilterIn(const Params& p) {
  Json j = Json::object();
  const std::vector<std::string> states = p.All("state");
  if (!states.empty()) j["state"] = states;
  for (const char* name :
       {"queue", "task", "unique_key", "concurrency_key", "created_after", "created_before",
        "finished_after", "finished_before", "q", "error_kind"}) {
    const std::string v = p.One(name);
    if (!v.empty()) j[name] = v;
  }
  WARDEN_ASSIGN_OR_RETURN(const bool rescued, p.Bool("rescued"));
  if (rescued) j["rescued"] = true;
  return JobFilterFromJson(j);
}

Response ListJobs(const Request& req, Client& c) {
  Params p(req, {"state", "queue", "task", "unique_key", "concurrency_key", "created_after",
                 "created_before", "finished_after", "finished_before", "q", "error_kind",
                 "rescued", "cursor", "limit"});
  if (!p.error().empty()) return ErrorResponse(400, "invalid_argument", p.error());
  auto filter = FilterIn(p);
  if (!filter.has_value()) return ErrorResponse(filter.error());
  JobFilter f = *filter;
  if (!p.One("cursor").empty()) {
    auto before = ParseJobCursor(p.One("cursor"));
    if (!before.has_value()) return ErrorResponse(before.error());
    f.before_id = *before;
  }
  auto limit = p.Int("limit", 100, 1, 1000);
  if (!limit.has_value()) return ErrorResponse(limit.error());
  // One more than asked: whether a next page exists, without an empty one.
  f.limit = static_cast<int>(*limit) + 1;
  int64_t total = 0;
  auto jobs = c.ListJobs(f, &total);
  if (!jobs.has_value()) return ErrorResponse(jobs.error());
  Json next = nullptr;
  if (static_cast<int64_t>(jobs->size()) > *limit) {
    jobs->pop_back();
    next = EncodeJobCursor(jobs->back().id);
  }
  Json out = Json::array();
  for (const JobInfo& j : *jobs) out.push_back(JobToJson(j, false));
  return JsonResponse({{"jobs", out}, {"total", total}, {"next_cursor", next}});
}

// POST /v1/jobs/bulk (server/op_bodies.h).
Response Bulk(const Request& req, Client& c, const std::function<void()>& started) {
  auto text = ParseJsonText(req.body);
  if (!text.has_value()) {
    return ErrorResponse(400, "invalid_json", "the request body " + text.error().message());
  }
  auto body = BulkBodyIn(*text);
  if (!body.has_value()) return ErrorResponse(body.error());
  if (body->dry_run) {
    auto count = c.BulkCount(body->action, body->filter);
    if (!count.has_value()) return ErrorResponse(count.error());
    return JsonResponse({{"action", BulkActionName(body->action)},
                         {"dry_run", true},
                         {"filter", JobFilterToJson(body->filter)},
                         {"count", *count}});
  }
  auto op = c.BulkStart(body->action, body->filter, RetryOptions{body->fresh});
  if (!op.has_value()) return ErrorResponse(op.error());
  if (started) started();
  return JsonResponse(BulkOpToJson(*op), 202);
}

// Whether an active worker runs each job, and `warden add`'s note for a new
// one none runs, asked once per kind (queue, task, command or not).
class ServedCache {
 public:
  explicit ServedCache(Client& c) : c_(c) {}
  Result<bool> Of(const JobSpec& spec) {
    auto it = served_.find(KeyOf(spec));
    if (it != served_.end()) return it->second;
    WARDEN_ASSIGN_OR_RETURN(bool served, c_.AnyWorkerRuns(spec));
    served_.emplace(KeyOf(spec), served);
    return served;
  }
  // Its node's refusal when workers would run it there, else who would.
  std::string Note(JobId id, const JobSpec& spec) {
    auto [it, added] = node_fix_.try_emplace(KeyOf(spec));
    if (added) {
      if (auto why = c_.WhyNotRunning(id); why.has_value()) {
        for (const WhyReason& reason : *why) {
          if (reason.code == "node_disabled") it->second = reason.message;
        }
      }
    }
    if (!it->second.empty()) return "job " + std::to_string(id) + " waits: " + it->second;
    return "no active worker runs job " + std::to_string(id) + " yet; it waits until one does (" +
           WhoWouldRun(spec) + ")";
  }

 private:
  using Key = std::tuple<std::string, std::string, bool>;
  static Key KeyOf(const JobSpec& s) { return {s.queue, s.task, !s.command.empty()}; }
  Client& c_;
  std::map<Key, bool> served_;
  std::map<Key, std::string> node_fix_;
};

// POST /v1/jobs (one job object) and /v1/jobs/batch ({"jobs": [...]}, at
// most kMaxBatchJobs, one transaction): every job is checked before any is
// stored, with `warden add`'s rules (warden/job_json.h). ?require_worker=true
// is `warden add --require-worker`: nothing is added if no active worker
// runs a job. 201 when a job was created, 200 when every one existed
// already (its unique key).
Response Enqueue(const Request& req, Client& c, bool batch, bool allow_commands) {
  Params p(req, {"require_worker"});
  if (!p.error().empty()) return ErrorResponse(400, "invalid_argument", p.error());
  auto require_worker = p.Bool("require_worker");
  if (!require_worker.has_value()) return ErrorResponse(require_worker.error());
  auto body = ParseJsonText(req.body);
  if (!body.has_value()) {
    return ErrorResponse(400, "invalid_json", "the request body " + body.error().message());
  }
  JobJsonOptions options;
  options.allow_commands = allow_commands;
  auto now = c.StoreNow();
  if (!now.has_value()) return ErrorResponse(now.error());
  options.now = *now;
  // Said plainly, and as 403: the request is well formed, the server's
  // operator has not allowed it.
  auto refuse_commands = [&](const Json& job) -> std::optional<Response> {
    if (allow_commands || !job.is_object() || !job.contains("cmd") || job["cmd"].is_null()) {
      return std::nullopt;
    }
    return ErrorResponse(403, "commands_not_allowed",
                         "command jobs (cmd) over HTTP need a server started with "
                         "warden serve --allow-cmd-jobs");
  };
  std::vector<JobSpec> specs;
  if (!batch) {
    if (auto refused = refuse_commands(*body)) return *refused;
    auto spec = JobSpecFromJson(*body, options);
    if (!spec.has_value()) return ErrorResponse(spec.error());
    specs.push_back(std::move(*spec));
  } else {
    if (!body->is_object() || !body->contains("jobs") || !(*body)["jobs"].is_array() ||
        body->size() != 1) {
      return ErrorResponse(400, "invalid_argument",
                           "the body must be {\"jobs\": [job, ...]} and nothing else");
    }
    const Json& jobs = (*body)["jobs"];
    if (jobs.size() > kMaxBatchJobs) {
      return ErrorResponse(400, "invalid_argument",
                           "a batch holds at most " + std::to_string(kMaxBatchJobs) +
                               " jobs (one transaction); this one has " +
                               std::to_string(jobs.size()));
    }
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (auto refused = refuse_commands(jobs[i])) return *refused;
      auto spec = JobSpecFromJson(jobs[i], options);
      if (!spec.has_value()) {
        return ErrorResponse(spec.error().Annotate("jobs[" + std::to_string(i) + "]"));
      }
      specs.push_back(std::move(*spec));
    }
  }
  ServedCache served(c);
  if (*require_worker) {
    for (size_t i = 0; i < specs.size(); ++i) {
      auto runs = served.Of(specs[i]);
      if (!runs.has_value()) return ErrorResponse(runs.error());
      if (*runs) continue;
      const std::string where = batch ? "jobs[" + std::to_string(i) + "]: " : "";
      return ErrorResponse(
          FailedPrecondition(where + NoWorkerRuns(specs[i]) + "; nothing was added"));
    }
  }
  auto stored = c.EnqueueMany(specs);
  if (!stored.has_value()) return ErrorResponse(stored.error());
  bool any_created = false;
  Json out = Json::array();
  for (size_t i = 0; i < stored->size(); ++i) {
    const EnqueueResult& r = (*stored)[i];
    any_created |= r.created;
    Json e = {{"id", r.id}, {"created", r.created}};
    // Said, never refused (without require_worker): the job waits for its
    // worker. Unknown (null) if the question failed.
    auto runs = served.Of(specs[i]);
    e["served"] = runs.has_value() ? Json(*runs) : Json();
    if (runs.has_value() && !*runs && r.created) e["note"] = served.Note(r.id, specs[i]);
    out.push_back(std::move(e));
  }
  const int status = any_created ? 201 : 200;
  if (!batch) return JsonResponse(out[0], status);
  return JsonResponse({{"jobs", out}}, status);
}

Response Queues(Client& c) {
  auto queues = c.ListQueues();
  if (!queues.has_value()) return ErrorResponse(queues.error());
  auto now = c.StoreNow();
  if (!now.has_value()) return ErrorResponse(now.error());
  Json out = Json::array();
  for (const QueueInfo& q : *queues) out.push_back(QueueToJson(q, *now));
  return JsonResponse({{"queues", out}});
}

// PUT /v1/queues/{queue}/limits: {"concurrency": N or null, "rate":
// "N/INTERVAL" or null}, at least one set; the queue's limits become
// exactly these (warden/flow.h).
Result<QueueLimits> LimitsIn(const std::string& text) {
  auto body = ParseJsonText(text);
  const std::string usage =
      "the body must be {\"concurrency\": N or null, \"rate\": \"N/INTERVAL\" or null}, "
      "at least one set (DELETE removes them)";
  if (!body.has_value()) return InvalidArgument("the request body " + body.error().message());
  if (!body->is_object()) return InvalidArgument(usage);
  QueueLimits limits;
  for (const auto& [name, value] : body->items()) {
    if (name == "concurrency") {
      if (value.is_null()) continue;
      if (!value.is_number_integer()) {
        return InvalidArgument("concurrency must be a whole number from 1 to " +
                               std::to_string(kMaxFlowLimit) + ", or null");
      }
      const bool huge = value.is_number_unsigned() &&
                        value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX);
      const int64_t n = huge ? INT64_MAX : value.get<int64_t>();
      WARDEN_RETURN_IF_ERROR(CheckConcurrencyLimit(n));
      limits.concurrency = n;
    } else if (name == "rate") {
      if (value.is_null()) continue;
      if (!value.is_string()) return InvalidArgument("rate must be a string N/INTERVAL, or null");
      WARDEN_ASSIGN_OR_RETURN(RateLimit r, ParseRate(value.get<std::string>()));
      limits.rate = r;
    } else {
      return InvalidArgument("unknown member \"" + OneLine(name, 40) + "\": " + usage);
    }
  }
  if (limits.empty()) return InvalidArgument(usage);
  return limits;
}

Response QueueLimitsRoute(const Request& req, Client& c, const std::string& queue) {
  if (req.method == "GET") {
    auto flow = c.GetQueueFlow(queue);
    if (!flow.has_value()) return ErrorResponse(flow.error());
    if (!flow->has_value()) {
      return JsonResponse({{"queue", queue},
                           {"limits", LimitsToJson(QueueLimits{})},
                           {"running", nullptr},
                           {"holders", Json::array()},
                           {"recent_starts", nullptr},
                           {"next_start_at", nullptr}});
    }
    const QueueFlow& f = **flow;
    Json holders = Json::array();
    for (const auto& [id, worker] : f.holders) holders.push_back({{"id", id}, {"worker", worker}});
    return JsonResponse(
        {{"queue", queue},
         {"limits", LimitsToJson(f.limits)},
         {"running", f.running},
         {"holders", holders},
         {"recent_starts", f.limits.rate ? Json(f.recent_starts) : Json()},
         {"next_start_at", f.next_start_at ? Json(FormatTime(*f.next_start_at)) : Json()}});
  }
  QueueLimits limits;
  if (req.method == "PUT") {
    auto parsed = LimitsIn(req.body);
    if (!parsed.has_value()) return ErrorResponse(parsed.error());
    limits = *parsed;
  }
  auto changed = c.SetQueueLimits(queue, limits);
  if (!changed.has_value()) return ErrorResponse(changed.error());
  return JsonResponse({{"queue", queue}, {"limits", LimitsToJson(limits)}, {"changed", *changed}});
}

}  // namespace

Response Api::Route(const Request& req, Client& c, const Caller& caller) {
  const std::vector<std::string>& seg = req.segments;
  const std::string& m = req.method;
  auto needs = [&](Scope s) { return static_cast<int>(caller.scope) >= static_cast<int>(s); };

  if (seg.size() == 1 && seg[0] == "metrics") {
    if (m != "GET") return MethodNotAllowed("GET");
    if (!needs(Scope::kRead)) return Forbidden(caller, Scope::kRead);
    return Metrics(c);
  }
  if (seg.empty() || seg[0] != "v1") {
    return ErrorResponse(404, "not_found", "no route " + OneLine(req.path, 80));
  }
  const size_t n = seg.size();
  const std::string what = n > 1 ? seg[1] : "";

  if (what == "queues") {
    if (n == 2) {
      if (m != "GET") return MethodNotAllowed("GET");
      if (!needs(Scope::kRead)) return Forbidden(caller, Scope::kRead);
      return Queues(c);
    }
    if (n == 4 && (seg[3] == "pause" || seg[3] == "resume")) {
      if (m != "POST") return MethodNotAllowed("POST");
      if (!needs(Scope::kOperate)) return Forbidden(caller, Scope::kOperate);
      const bool pause = seg[3] == "pause";
      Json body;  // none: null
      if (pause && !req.body.empty()) {
        auto text = ParseJsonText(req.body);
        if (!text.has_value()) {
          return ErrorResponse(400, "invalid_json", "the request body " + text.error().message());
        }
        body = std::move(*text);
      }
      auto create = PauseCreateIn(body);
      if (!create.has_value()) return ErrorResponse(create.error());
      auto changed = pause ? c.PauseQueue(seg[2], *create) : c.ResumeQueue(seg[2]);
      if (!changed.has_value() && changed.error().code() == StatusCode::kNotFound) {
        return ErrorResponse(404, "not_found",
                             changed.error().message() +
                                 "; to pause it before its first job, send {\"create\": true}");
      }
      if (!changed.has_value()) return ErrorResponse(changed.error());
      return JsonResponse({{"queue", seg[2]}, {"paused", pause}, {"changed", *changed}});
    }
    if (n == 4 && seg[3] == "limits") {
      if (m != "GET" && m != "PUT" && m != "DELETE") return MethodNotAllowed("GET, PUT, DELETE");
      const Scope needed = m == "GET" ? Scope::kRead : Scope::kOperate;
      if (!needs(needed)) return Forbidden(caller, needed);
      return QueueLimitsRoute(req, c, seg[2]);
    }
  }

  if (what == "jobs") {
    if (n == 2 && m == "POST") {
      if (!needs(Scope::kEnqueue)) return Forbidden(caller, Scope::kEnqueue);
      return Enqueue(req, c, /*batch=*/false, options_.allow_command_jobs);
    }
    if (n == 2) {
      if (m != "GET") return MethodNotAllowed("GET, POST");
      if (!needs(Scope::kRead)) return Forbidden(caller, Scope::kRead);
      return ListJobs(req, c);
    }
    if (n >= 3 && seg[2] == "bulk") {
      if (n == 3 && m == "POST") {
        if (!needs(Scope::kOperate)) return Forbidden(caller, Scope::kOperate);
        return Bulk(req, c, options_.bulk_started);
      }
      if (m != "GET") return MethodNotAllowed(n == 3 ? "GET, POST" : "GET");
      if (!needs(Scope::kRead)) return Forbidden(caller, Scope::kRead);
      if (n == 3) {
        Params p(req, {"limit"});
        if (!p.error().empty()) return ErrorResponse(400, "invalid_argument", p.error());
        auto limit = p.Int("limit", 20, 1, 1000);
        if (!limit.has_value()) return ErrorResponse(limit.error());
        return Answer<std::vector<BulkOp>>(c.BulkList(static_cast<int>(*limit)),
                                           [](const auto& list) {
                                             Json out = Json::array();
                                             for (const BulkOp& op : list) {
                                               out.push_back(BulkOpToJson(op));
                                             }
                                             return Json{{"operations", out}};
                                           });
      }
      if (n == 4) {
        auto op_id = JobIdIn(seg[3]);
        if (!op_id.has_value()) {
          return ErrorResponse(400, "invalid_argument",
                               "'" + OneLine(seg[3], 40) + "' is not an operation id");
        }
        return Answer<BulkOp>(c.BulkGet(*op_id), BulkOpToJson);
      }
    }
    if (n == 3 && seg[2] == "batch") {
      if (m != "POST") return MethodNotAllowed("POST");
      if (!needs(Scope::kEnqueue)) return Forbidden(caller, Scope::kEnqueue);
      return Enqueue(req, c, /*batch=*/true, options_.allow_command_jobs);
    }
    auto id = JobIdIn(seg[2]);
    if (!id.has_value()) return ErrorResponse(id.error());
    if (n == 3 && m == "DELETE") {
      if (!needs(Scope::kOperate)) return Forbidden(caller, Scope::kOperate);
      const Status s = c.DeleteJob(*id);
      if (!s.ok()) return ErrorResponse(s);
      return JsonResponse({{"id", *id}, {"deleted", true}});
    }
    if (n == 3) {
      if (m != "GET") return MethodNotAllowed("GET, DELETE");
      if (!needs(Scope::kRead)) return Forbidden(caller, Scope::kRead);
      return Answer<JobInfo>(c.GetJob(*id), [](const JobInfo& j) { return JobToJson(j, true); });
    }
    if (n == 4 && seg[3] == "why") {
      if (m != "GET") return MethodNotAllowed("GET");
      if (!needs(Scope::kRead)) return Forbidden(caller, Scope::kRead);
      auto job = c.GetJob(*id);
      if (!job.has_value()) return ErrorResponse(job.error());
      auto reasons = c.WhyNotRunning(*id);
      if (!reasons.has_value()) return ErrorResponse(reasons.error());
      return JsonResponse(WhyToJson(*job, *reasons));
    }
    if (n == 4 && seg[3] == "timeline") {
      if (m != "GET") return MethodNotAllowed("GET");
      if (!needs(Scope::kRead)) return Forbidden(caller, Scope::kRead);
      return Answer<JobTimeline>(c.Timeline(*id), TimelineToJson);
    }
    if (n == 4 && seg[3] == "retry") {
      if (m != "POST") return MethodNotAllowed("POST");
      if (!needs(Scope::kOperate)) return Forbidden(caller, Scope::kOperate);
      Json body;  // none: null
      if (!req.body.empty()) {
        auto text = ParseJsonText(req.body);
        if (!text.has_value()) {
          return ErrorResponse(400, "invalid_json", "the request body " + text.error().message());
        }
        body = std::move(*text);
      }
      auto retry = RetryBodyIn(body);
      if (!retry.has_value()) return ErrorResponse(retry.error());
      const Status s = c.RetryJob(*id, *retry);
      if (!s.ok()) return ErrorResponse(s);
      return JsonResponse({{"id", *id}, {"state", "available"}, {"fresh", retry->fresh}});
    }
    if (n == 4 && seg[3] == "run-now") {
      if (m != "POST") return MethodNotAllowed("POST");
      if (!needs(Scope::kOperate)) return Forbidden(caller, Scope::kOperate);
      const Status s = c.RunJobNow(*id);
      if (!s.ok()) return ErrorResponse(s);
      return JsonResponse({{"id", *id}, {"state", "available"}});
    }
    if (n == 4 && seg[3] == "cancel") {
      if (m != "POST") return MethodNotAllowed("POST");
      if (!needs(Scope::kOperate)) return Forbidden(caller, Scope::kOperate);
      auto state = c.CancelJob(*id);
      if (!state.has_value()) return ErrorResponse(state.error());
      return JsonResponse({{"id", *id},
                           {"state", JobStateName(*state)},
                           {"cancel_requested", *state == JobState::kRunning}});
    }
  }

  if (what == "workers") {
    if (n == 2) {
      if (m != "GET") return MethodNotAllowed("GET");
      if (!needs(Scope::kRead)) return Forbidden(caller, Scope::kRead);
      Params p(req, {"all"});
      if (!p.error().empty()) return ErrorResponse(400, "invalid_argument", p.error());
      auto all = p.Bool("all");
      if (!all.has_value()) return ErrorResponse(all.error());
      return Answer<std::vector<WorkerInfo>>(c.ListWorkers(!*all), [](const auto& list) {
        Json out = Json::array();
        for (const WorkerInfo& w : list) out.push_back(WorkerToJson(w));
        return Json{{"workers", out}};
      });
    }
    if (n == 4 && seg[3] == "release") {
      if (m != "POST") return MethodNotAllowed("POST");
      if (!needs(Scope::kOperate)) return Forbidden(caller, Scope::kOperate);
      Params p(req, {"force"});
      if (!p.error().empty()) return ErrorResponse(400, "invalid_argument", p.error());
      auto force = p.Bool("force");
      if (!force.has_value()) return ErrorResponse(force.error());
      auto recovered = c.ReleaseWorker(seg[2], *force);
      if (!recovered.has_value()) return ErrorResponse(recovered.error());
      return JsonResponse({{"worker", seg[2]}, {"recovered", *recovered}});
    }
  }

  // The node registry (server/api_nodes.h). POST /v1/nodes/sync is the
  // sync; any other method on /v1/nodes/sync is the node named "sync".
  if (what == "nodes") {
    if (n == 2) {
      if (m != "GET") return MethodNotAllowed("GET");
      if (!needs(Scope::kRead)) return Forbidden(caller, Scope::kRead);
      Params p(req, {});
      if (!p.error().empty()) return ErrorResponse(400, "invalid_argument", p.error());
      return ListNodesRoute(c);
    }
    if (n == 3 && seg[2] == "sync" && m == "POST") {
      if (!needs(Scope::kOperate)) return Forbidden(caller, Scope::kOperate);
      return SyncNodesRoute(req, c);
    }
    if (n == 3) {
      if (m != "PUT" && m != "DELETE") {
        return MethodNotAllowed(seg[2] == "sync" ? "POST, PUT, DELETE" : "PUT, DELETE");
      }
      if (!needs(Scope::kOperate)) return Forbidden(caller, Scope::kOperate);
      if (m == "PUT") {
        Params p(req, {});
        if (!p.error().empty()) return ErrorResponse(400, "invalid_argument", p.error());
        return PutNodeRoute(req, c, seg[2]);
      }
      Params p(req, {"force"});
      if (!p.error().empty()) return ErrorResponse(400, "invalid_argument", p.error());
      auto force = p.Bool("force");
      if (!force.has_value()) return ErrorResponse(force.error());
      return RemoveNodeRoute(c, seg[2], *force);
    }
    if (n == 4 && (seg[3] == "disable" || seg[3] == "enable")) {
      if (m != "POST") return MethodNotAllowed("POST");
      if (!needs(Scope::kOperate)) return Forbidden(caller, Scope::kOperate);
      Params p(req, {});
      if (!p.error().empty()) return ErrorResponse(400, "invalid_argument", p.error());
      return SetNodeEnabledRoute(c, seg[2], seg[3] == "enable");
    }
  }

  if (what == "stats" && n == 3 && seg[2] == "history") {
    if (m != "GET") return MethodNotAllowed("GET");
    if (!needs(Scope::kRead)) return Forbidden(caller, Scope::kRead);
    Json samples = Json::array();
    for (const StatsSample& s : stats_history_.Samples()) {
      samples.push_back({{"at", FormatTime(s.at)}, {"succeeded", s.succeeded}, {"dead", s.dead}});
    }
    return JsonResponse({{"min_gap_ms", StatsHistory::kMinGapMs},
                         {"span_ms", StatsHistory::kSpanMs},
                         {"samples", samples}});
  }

  if (what == "stats" && n == 2) {
    if (m != "GET") return MethodNotAllowed("GET");
    if (!needs(Scope::kRead)) return Forbidden(caller, Scope::kRead);
    auto stats = c.GetStats();
    if (!stats.has_value()) return ErrorResponse(stats.error());
    // The server's clock, not the store's (no round trip for it): the
    // dashboard draws the samples against its own clock anyway.
    stats_history_.Record(*stats, std::chrono::duration_cast<std::chrono::milliseconds>(
                                      std::chrono::system_clock::now().time_since_epoch())
                                      .count());
    auto unserved = c.Unserved();
    if (!unserved.has_value()) return ErrorResponse(unserved.error());
    Json out = StatsToJson(*stats);
    out["unserved"] = UnservedToJson(*unserved);
    return JsonResponse(out);
  }

  // Who is calling: the token's name and scope (never the token), so that
  // the dashboard shows only the buttons its token may press.
  if (what == "whoami" && n == 2) {
    if (m != "GET") return MethodNotAllowed("GET");
    if (!needs(Scope::kRead)) return Forbidden(caller, Scope::kRead);
    return JsonResponse({{"actor", caller.actor}, {"scope", std::string(ScopeName(caller.scope))}});
  }

  if (what == "events" && n == 2) {
    if (m != "GET") return MethodNotAllowed("GET");
    if (!needs(Scope::kRead)) return Forbidden(caller, Scope::kRead);
    Params p(req, {});
    if (!p.error().empty()) return ErrorResponse(400, "invalid_argument", p.error());
    if (options_.events == nullptr) {
      return ErrorResponse(404, "not_found", "this server sends no live updates");
    }
    Response r;
    r.content_type = "text/event-stream";
    r.stream = std::make_shared<StreamBody>();
    r.stream->attach = [hub = options_.events](EventHub::Send send) {
      return hub->Subscribe(std::move(send));
    };
    return r;
  }

  if (what == "audit" && n == 2) {
    if (m != "GET") return MethodNotAllowed("GET");
    if (!needs(Scope::kRead)) return Forbidden(caller, Scope::kRead);
    Params p(req, {"limit", "before"});
    if (!p.error().empty()) return ErrorResponse(400, "invalid_argument", p.error());
    auto limit = p.Int("limit", 100, 1, 1000);
    if (!limit.has_value()) return ErrorResponse(limit.error());
    auto before = p.Int("before", 0, 0, INT64_MAX);
    if (!before.has_value()) return ErrorResponse(before.error());
    return Answer<std::vector<AuditEntry>>(
        c.ListAudit(static_cast<int>(*limit), *before), [](const auto& list) {
          Json out = Json::array();
          for (const AuditEntry& e : list) out.push_back(AuditToJson(e));
          return Json{{"entries", out}};
        });
  }

  if (what == "tokens") {
    if (!needs(Scope::kAdmin)) return Forbidden(caller, Scope::kAdmin);
    if (n == 2 && m == "GET") {
      return Answer<std::vector<TokenInfo>>(c.ListTokens(), [](const auto& list) {
        Json out = Json::array();
        for (const TokenInfo& t : list) out.push_back(TokenToJson(t));
        return Json{{"tokens", out}};
      });
    }
    if (n == 2 && m == "POST") {
      // The one strict parser of every route (depth limit, no trailing
      // bytes, no NUL): Json::parse here read an 8 MiB '[' body for 20 s.
      auto body = ParseJsonText(req.body);
      if (!body.has_value()) {
        return ErrorResponse(400, "invalid_json", "the request body " + body.error().message());
      }
      const std::string usage =
          "the body must be {\"name\": \"NAME\", \"scope\": \"read\"|\"enqueue\"|"
          "\"operate\"|\"admin\", \"expires_in\": \"30d\"} (scope optional: read; "
          "expires_in optional: never)";
      if (!body->is_object() || !body->contains("name") || !(*body)["name"].is_string()) {
        return ErrorResponse(400, "invalid_argument", usage);
      }
      for (const auto& [member, value] : body->items()) {
        if (member != "name" && member != "scope" && member != "expires_in") {
          return ErrorResponse(400, "invalid_argument",
                               "unknown member \"" + OneLine(member, 40) + "\": " + usage);
        }
      }
      std::string scope_name = "read";
      if (body->contains("scope")) {
        // A scope of the wrong type is refused, never read as the default.
        if (!(*body)["scope"].is_string()) return ErrorResponse(400, "invalid_argument", usage);
        scope_name = (*body)["scope"].get<std::string>();
      }
      const auto scope = ParseScope(scope_name);
      if (!scope) {
        return ErrorResponse(400, "invalid_argument",
                             "scope must be one of read, enqueue, operate, admin");
      }
      std::optional<Millis> expires_in;
      if (body->contains("expires_in")) {
        const Json& given = (*body)["expires_in"];
        if (!given.is_string()) return ErrorResponse(400, "invalid_argument", usage);
        auto d = ParseDuration(given.get<std::string>());
        if (!d.has_value()) return ErrorResponse(d.error().Annotate("expires_in"));
        expires_in = *d;
      }
      auto made = c.CreateToken((*body)["name"].get<std::string>(), *scope, expires_in);
      if (!made.has_value()) return ErrorResponse(made.error());
      Json out = TokenToJson(made->info);
      out["token"] = made->secret;
      return JsonResponse(out, 201);
    }
    if (n == 3 && m == "DELETE") {
      return Answer<TokenInfo>(c.RevokeToken(seg[2]), TokenToJson);
    }
    return MethodNotAllowed(n == 2 ? "GET, POST" : "DELETE");
  }

  return ErrorResponse(404, "not_found", "no route " + OneLine(req.path, 80));
}

}  // namespace warden::server
