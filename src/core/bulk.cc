#include "warden/bulk.h"

#include <algorithm>
#include <set>

#include "warden/duration.h"
#include "warden/lists.h"
#include "warden/text.h"

namespace warden {

const char* BulkActionName(BulkAction a) {
  switch (a) {
    case BulkAction::kRetry: return "retry";
    case BulkAction::kCancel: return "cancel";
    case BulkAction::kDelete: return "delete";
  }
  return "retry";
}

std::optional<BulkAction> ParseBulkAction(const std::string& s) {
  if (s == "retry") return BulkAction::kRetry;
  if (s == "cancel") return BulkAction::kCancel;
  if (s == "delete") return BulkAction::kDelete;
  return std::nullopt;
}

std::string BulkAuditAction(BulkAction a) {
  return std::string("jobs.bulk_") + BulkActionName(a);
}

std::string BulkAuditTarget(const BulkOp& op) {
  Json target = {{"op", op.id}, {"filter", JobFilterToJson(op.filter)}};
  if (op.fresh) target["fresh"] = true;
  return target.dump();
}

std::optional<AuditEntry> AdvanceBulkOp(BulkOp& op, const std::vector<JobId>& ids, int batch,
                                        TimeMs now, Millis lease) {
  if (!ids.empty()) op.cursor = ids.back();
  ++op.batches;
  op.lease_expires_at = now + lease.count();
  if (static_cast<int>(ids.size()) >= batch) return std::nullopt;
  op.state = BulkState::kDone;
  op.finished_at = now;
  op.owner.clear();
  op.lease_expires_at.reset();
  return AuditEntry{0, 0, op.actor, BulkAuditAction(op.action) + ".done", BulkAuditTarget(op),
                    op.done};
}

Json BulkOpToJson(const BulkOp& op) {
  return {{"id", op.id},
          {"action", BulkActionName(op.action)},
          {"fresh", op.fresh},
          {"state", BulkStateName(op.state)},
          {"filter", JobFilterToJson(op.filter)},
          {"actor", op.actor},
          {"total", op.total},
          {"done", op.done},
          {"skipped", op.skipped},
          {"batches", op.batches},
          {"created_at", FormatTime(op.created_at)},
          {"finished_at", op.finished_at ? Json(FormatTime(*op.finished_at)) : Json()},
          {"owner", op.owner.empty() ? Json() : Json(op.owner)}};
}

const char* BulkStateName(BulkState s) { return s == BulkState::kDone ? "done" : "running"; }

std::vector<JobState> BulkActionStates(BulkAction a) {
  switch (a) {
    case BulkAction::kRetry:
      return {JobState::kDead, JobState::kCancelled, JobState::kExpired};
    case BulkAction::kCancel:
      return {JobState::kScheduled, JobState::kAvailable, JobState::kRunning,
              JobState::kRetryable};
    case BulkAction::kDelete:
      return {JobState::kSucceeded, JobState::kDead, JobState::kCancelled, JobState::kExpired};
  }
  return {};
}

Result<JobFilter> BulkScope(BulkAction a, JobFilter f) {
  const std::vector<JobState> allowed = BulkActionStates(a);
  if (f.states.empty()) {
    f.states = allowed;
    return f;
  }
  std::vector<JobState> kept;
  for (JobState s : allowed) {
    if (std::find(f.states.begin(), f.states.end(), s) != f.states.end()) kept.push_back(s);
  }
  if (kept.empty()) {
    std::string names;
    for (JobState s : allowed) names += std::string(names.empty() ? "" : ", ") + JobStateName(s);
    return InvalidArgument(std::string("a bulk ") + BulkActionName(a) +
                           " applies only to jobs that are " + names +
                           "; the filter names none of these states");
  }
  f.states = kept;
  return f;
}

namespace {

void PutTime(Json& j, const char* name, const std::optional<TimeMs>& t) {
  if (t) j[name] = FormatTime(*t);
}

Status TimeIn(const Json& j, const std::string& name, std::optional<TimeMs>* out) {
  const auto it = j.find(name);
  if (it == j.end() || it->is_null()) return Status::Ok();
  const Json& v = *it;
  if (!v.is_string()) return InvalidArgument("filter: \"" + name + "\" must be an RFC 3339 time");
  if (v.get_ref<const std::string&>().empty()) return Status::Ok();
  auto t = ParseTime(v.get_ref<const std::string&>());
  if (!t.has_value()) return t.error().Annotate("filter: \"" + name + "\"");
  *out = *t;
  return Status::Ok();
}

Status TextIn(const Json& j, const std::string& name, std::string* out) {
  const auto it = j.find(name);
  if (it == j.end() || it->is_null()) return Status::Ok();
  const Json& v = *it;
  if (!v.is_string()) return InvalidArgument("filter: \"" + name + "\" must be a string");
  *out = v.get<std::string>();
  if (out->size() > 1024) {
    return InvalidArgument("filter: \"" + name + "\" is longer than 1024 bytes");
  }
  return Status::Ok();
}

}  // namespace

Json JobFilterToJson(const JobFilter& f) {
  Json j = Json::object();
  if (!f.states.empty()) {
    Json states = Json::array();
    for (JobState s : f.states) states.push_back(JobStateName(s));
    j["state"] = states;
  }
  if (!f.queue.empty()) j["queue"] = f.queue;
  if (!f.task.empty()) j["task"] = f.task;
  if (!f.unique_key.empty()) j["unique_key"] = f.unique_key;
  if (!f.concurrency_key.empty()) j["concurrency_key"] = f.concurrency_key;
  PutTime(j, "created_after", f.created_after);
  PutTime(j, "created_before", f.created_before);
  PutTime(j, "finished_after", f.finished_after);
  PutTime(j, "finished_before", f.finished_before);
  if (!f.search.empty()) j["q"] = f.search;
  if (f.error_kind) j["error_kind"] = ErrorKindName(*f.error_kind);
  if (f.rescued) j["rescued"] = true;
  return j;
}

Result<JobFilter> JobFilterFromJson(const Json& j) {
  if (!j.is_object()) return InvalidArgument("filter: must be a JSON object");
  static const std::set<std::string> kKnown = {
      "state",         "queue",          "task",           "unique_key",      "concurrency_key",
      "created_after", "created_before", "finished_after", "finished_before", "q",
      "error_kind",    "rescued"};
  for (const auto& [name, value] : j.items()) {
    if (!kKnown.count(name)) {
      return InvalidArgument("filter: unknown member \"" + OneLine(name, 40) + "\"");
    }
  }
  JobFilter f;
  if (j.contains("state") && !j["state"].is_null()) {
    const Json& s = *j.find("state");
    std::vector<std::string> names;
    if (s.is_string()) {
      names = SplitList(s.get<std::string>());
    } else if (s.is_array()) {
      for (const Json& e : s) {
        if (!e.is_string()) return InvalidArgument("filter: \"state\" must hold strings");
        names.push_back(e.get<std::string>());
      }
    } else {
      return InvalidArgument("filter: \"state\" must be a state name or a list of them");
    }
    for (const std::string& n : names) {
      auto state = ParseJobState(n);
      if (!state) {
        return InvalidArgument("filter: '" + OneLine(n, 40) + "' is not a job state (" +
                               JobStateNames() + ")");
      }
      if (std::find(f.states.begin(), f.states.end(), *state) == f.states.end()) {
        f.states.push_back(*state);
      }
    }
  }
  const Json& o = j;
  WARDEN_RETURN_IF_ERROR(TextIn(o, "queue", &f.queue));
  WARDEN_RETURN_IF_ERROR(TextIn(o, "task", &f.task));
  WARDEN_RETURN_IF_ERROR(TextIn(o, "unique_key", &f.unique_key));
  WARDEN_RETURN_IF_ERROR(TextIn(o, "concurrency_key", &f.concurrency_key));
  WARDEN_RETURN_IF_ERROR(TextIn(o, "q", &f.search));
  WARDEN_RETURN_IF_ERROR(TimeIn(o, "created_after", &f.created_after));
  WARDEN_RETURN_IF_ERROR(TimeIn(o, "created_before", &f.created_before));
  WARDEN_RETURN_IF_ERROR(TimeIn(o, "finished_after", &f.finished_after));
  WARDEN_RETURN_IF_ERROR(TimeIn(o, "finished_before", &f.finished_before));
  std::string kind;
  WARDEN_RETURN_IF_ERROR(TextIn(o, "error_kind", &kind));
  if (!kind.empty()) {
    f.error_kind = ParseErrorKind(kind);
    if (!f.error_kind) {
      return InvalidArgument("filter: '" + OneLine(kind, 40) + "' is not an error kind (" +
                             ErrorKindNames() + ")");
    }
  }
  if (const auto r = j.find("rescued"); r != j.end() && !r->is_null()) {
    if (!r->is_boolean()) return InvalidArgument("filter: \"rescued\" must be true or false");
    f.rescued = r->get<bool>();
  }
  return f;
}

std::string EncodeJobCursor(JobId before_id) {
  static const char kDigits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  char buf[16];
  size_t n = sizeof(buf);
  uint64_t v = static_cast<uint64_t>(before_id);
  do {
    buf[--n] = kDigits[v % 36];
    v /= 36;
  } while (v != 0);
  buf[--n] = 'c';
  return std::string(buf + n, sizeof(buf) - n);
}

Result<JobId> ParseJobCursor(const std::string& cursor) {
  std::string message = "'";
  message += OneLine(cursor, 40);
  message += "' is not a cursor (pass back a next_cursor as given)";
  const Status bad = InvalidArgument(message);
  if (cursor.size() < 2 || cursor.size() > 14 || cursor[0] != 'c' || cursor[1] == '0') {
    return bad;
  }
  uint64_t v = 0;
  for (size_t i = 1; i < cursor.size(); ++i) {
    const char ch = cursor[i];
    int d;
    if (ch >= '0' && ch <= '9') d = ch - '0';
    else if (ch >= 'a' && ch <= 'z') d = ch - 'a' + 10;
    else return bad;
    if (v > (static_cast<uint64_t>(INT64_MAX) - d) / 36) return bad;
    v = v * 36 + d;
  }
  return static_cast<JobId>(v);
}

}  // namespace warden
