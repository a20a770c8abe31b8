// Names of the public enums, exactly as docs/design.md spells them: they
// appear in the database, the CLI and --json output.
#include <array>
#include <string>
#include <string_view>

#include "warden/job.h"
#include "warden/log.h"
#include "warden/operator.h"
#include "warden/status.h"
#include "warden/worker.h"

namespace warden {
namespace {

template <typename E, size_t N>
const char* NameOf(const std::array<const char*, N>& names, E e) {
  const auto i = static_cast<size_t>(e);
  return i < N ? names[i] : "unknown";
}

template <typename E, size_t N>
std::optional<E> Parse(const std::array<const char*, N>& names, const std::string& s) {
  for (size_t i = 0; i < N; ++i) {
    if (s == names[i]) return static_cast<E>(i);
  }
  return std::nullopt;
}

constexpr std::array<const char*, 8> kJobStates = {
    "scheduled", "available", "running", "succeeded",
    "retryable", "dead",      "cancelled", "expired"};
constexpr std::array<const char*, 7> kErrorKinds = {
    "error", "crash", "timeout", "lost", "released", "crash_loop", "cancelled"};
constexpr std::array<const char*, 5> kLossCauses = {"proven_death", "lease_expiry", "operator",
                                                    "release", "worker_stop"};
constexpr std::array<const char*, 2> kDeliveries = {"at_least_once", "at_most_once"};
constexpr std::array<const char*, 3> kRetryPolicies = {"none", "default", "forever"};
constexpr std::array<const char*, 4> kWorkerStates = {"active", "draining", "stopped",
                                                      "dead"};
constexpr std::array<const char*, 4> kScopes = {"read", "enqueue", "operate", "admin"};
constexpr std::array<const char*, 4> kLogLevels = {"error", "warn", "info", "debug"};
constexpr std::array<const char*, 2> kLogFormats = {"text", "json"};
constexpr std::array<const char*, 9> kStatusCodes = {
    "ok",          "invalid argument", "not found",         "failed precondition",
    "aborted",     "unavailable",      "deadline exceeded", "data loss",
    "internal"};

}  // namespace

const char* StatusCodeName(StatusCode c) { return NameOf(kStatusCodes, c); }

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

Status Status::Annotate(const std::string& context) const {
  if (ok()) return *this;
  return Status(code_, context + ": " + message_);
}

const char* JobStateName(JobState s) { return NameOf(kJobStates, s); }
const char* LogLevelName(LogLevel l) { return NameOf(kLogLevels, l); }
const char* LogFormatName(LogFormat f) { return NameOf(kLogFormats, f); }
const char* ErrorKindName(ErrorKind k) { return NameOf(kErrorKinds, k); }
const char* LossCauseName(LossCause c) { return NameOf(kLossCauses, c); }
const char* DeliveryName(Delivery d) { return NameOf(kDeliveries, d); }
const char* RetryPolicyName(RetryPolicy p) { return NameOf(kRetryPolicies, p); }
const char* WorkerStateName(WorkerState s) { return NameOf(kWorkerStates, s); }

std::string JobStateNames() {
  std::string out;
  for (const char* name : kJobStates) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

std::optional<JobState> ParseJobState(const std::string& s) {
  return Parse<JobState>(kJobStates, s);
}
std::optional<LogLevel> ParseLogLevel(const std::string& s) {
  return Parse<LogLevel>(kLogLevels, s);
}
std::optional<LogFormat> ParseLogFormat(const std::string& s) {
  return Parse<LogFormat>(kLogFormats, s);
}
std::optional<ErrorKind> ParseErrorKind(const std::string& s) {
  return Parse<ErrorKind>(kErrorKinds, s);
}
std::string ErrorKindNames() {
  std::string out;
  for (const char* name : kErrorKinds) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}
std::optional<Delivery> ParseDelivery(const std::string& s) {
  return Parse<Delivery>(kDeliveries, s);
}
std::optional<RetryPolicy> ParseRetryPolicy(const std::string& s) {
  return Parse<RetryPolicy>(kRetryPolicies, s);
}
std::optional<WorkerState> ParseWorkerState(const std::string& s) {
  return Parse<WorkerState>(kWorkerStates, s);
}
const char* ScopeName(Scope s) { return NameOf(kScopes, s); }
std::optional<Scope> ParseScope(const std::string& s) { return Parse<Scope>(kScopes, s); }

int64_t QueueInfo::CountIn(JobState state) const {
  for (const auto& [name, n] : jobs) {
    if (name == JobStateName(state)) return n;
  }
  return 0;
}

bool IsTerminal(JobState s) {
  return s == JobState::kSucceeded || s == JobState::kDead ||
         s == JobState::kCancelled || s == JobState::kExpired;
}

}  // namespace warden
