// Status and Result<T>: how every warden call reports failure.
//
// Errors are values. A Status carries a code that tells the caller how to
// react, and a one-line message for a human:
//   kInvalidArgument     the request is wrong; do not retry it
//   kNotFound            the job / worker does not exist
//   kFailedPrecondition  the system is not in a state that allows it
//                        (a newer schema, a live worker with that name)
//   kAborted             a conflict; retry the whole transaction
//   kUnavailable         the store is busy, locked or gone; retry later
//   kDeadlineExceeded    a wait ran out of time
//   kDataLoss            the store is corrupt
//   kInternal            a bug
// Result<T> is shaped like std::expected<T, Status> (has_value, value,
// error) so a later switch is mechanical.
//
// Thread safety: values; safe to copy between threads.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace warden {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kFailedPrecondition,
  kAborted,
  kUnavailable,
  kDeadlineExceeded,
  kDataLoss,
  kInternal,
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "unavailable: database is locked"
  std::string ToString() const;

  // Prefixes the message with context: "claim: database is locked".
  Status Annotate(const std::string& context) const;

  // True for errors that go away by themselves (busy, locked, disconnected):
  // callers retry these with backoff.
  bool transient() const {
    return code_ == StatusCode::kUnavailable || code_ == StatusCode::kAborted;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status NotFound(std::string m) {
  return {StatusCode::kNotFound, std::move(m)};
}
inline Status FailedPrecondition(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}
inline Status Aborted(std::string m) {
  return {StatusCode::kAborted, std::move(m)};
}
inline Status Unavailable(std::string m) {
  return {StatusCode::kUnavailable, std::move(m)};
}
inline Status DeadlineExceeded(std::string m) {
  return {StatusCode::kDeadlineExceeded, std::move(m)};
}
inline Status DataLoss(std::string m) {
  return {StatusCode::kDataLoss, std::move(m)};
}
inline Status Internal(std::string m) {
  return {StatusCode::kInternal, std::move(m)};
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    assert(!std::get<Status>(v_).ok() && "Result from an ok Status");
  }

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Status& error() const { return std::get<Status>(v_); }
  Status status() const { return has_value() ? Status::Ok() : error(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace warden

#define WARDEN_CONCAT_INNER(a, b) a##b
#define WARDEN_CONCAT(a, b) WARDEN_CONCAT_INNER(a, b)

// Returns the Status from the enclosing function if `expr` is not ok.
#define WARDEN_RETURN_IF_ERROR(expr)            \
  do {                                          \
    ::warden::Status warden_status_ = (expr);   \
    if (!warden_status_.ok()) return warden_status_; \
  } while (0)

// `WARDEN_ASSIGN_OR_RETURN(auto x, MakeX());`
#define WARDEN_ASSIGN_OR_RETURN(lhs, expr) \
  WARDEN_ASSIGN_OR_RETURN_IMPL(WARDEN_CONCAT(warden_result_, __LINE__), lhs, expr)
#define WARDEN_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.has_value()) return tmp.error();          \
  lhs = std::move(tmp).value()
