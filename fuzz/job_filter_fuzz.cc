// What a listing or a bulk operation reads from a client: the cursor
// (ParseJobCursor) and the filter (JobFilterFromJson, which GET /v1/jobs
// query parameters and POST /v1/jobs/bulk bodies both go through, and
// which reads back a stored operation's filter). Checks: nothing crashes;
// a refusal is one InvalidArgument line; an accepted cursor is exactly what
// EncodeJobCursor writes for its id; an accepted filter written back
// (JobFilterToJson) reads back to the same filter; the input's first 8
// bytes as an id encode to a cursor that parses back to it. The bodies of
// POST /v1/jobs/bulk, POST /v1/jobs/{id}/retry and POST /v1/queues/{q}/pause
// (server/op_bodies.h): a bulk is accepted only with a filter or "all":
// true, "fresh" only on a retry; "fresh" and "create" are true only when
// the body says it.
#include <cstring>

#include "fuzz_check.h"
#include "server/op_bodies.h"
#include "warden/bulk.h"
#include "warden/text.h"

namespace {

// POST /v1/jobs/bulk's body: accepted only with a filter that sets
// something or "all": true, its filter one JobFilterFromJson accepts.
void CheckBulkBody(const warden::Json& j) {
  using namespace warden;
  auto body = server::BulkBodyIn(j);
  if (!body.has_value()) {
    FUZZ_CHECK(body.error().code() == StatusCode::kInvalidArgument, body.error().ToString());
    FUZZ_CHECK(body.error().message().find('\n') == std::string::npos, body.error().message());
    return;
  }
  FUZZ_CHECK(body->all || !server::FilterSetsNothing(body->filter), j.dump());
  FUZZ_CHECK(body->all == (j.contains("all") && j["all"] == Json(true)), j.dump());
  FUZZ_CHECK(JobFilterFromJson(JobFilterToJson(body->filter)).has_value(), j.dump());
  FUZZ_CHECK(!body->fresh || body->action == BulkAction::kRetry, j.dump());
}

// POST /v1/jobs/{id}/retry's body: fresh only when said so.
void CheckRetryBody(const warden::Json& j) {
  using namespace warden;
  auto retry = server::RetryBodyIn(j);
  if (!retry.has_value()) {
    FUZZ_CHECK(retry.error().code() == StatusCode::kInvalidArgument, retry.error().ToString());
    return;
  }
  FUZZ_CHECK(retry->fresh == (j.is_object() && j.value("fresh", false)), j.dump());
}

// POST /v1/queues/{q}/pause's body: create is true only when said so.
void CheckPauseBody(const warden::Json& j) {
  using namespace warden;
  auto create = server::PauseCreateIn(j);
  if (!create.has_value()) {
    FUZZ_CHECK(create.error().code() == StatusCode::kInvalidArgument, create.error().ToString());
    return;
  }
  FUZZ_CHECK(j.is_null() || j.is_object(), j.dump());
  FUZZ_CHECK(*create == (j.is_object() && j.value("create", false)), j.dump());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace warden;
  const std::string text(reinterpret_cast<const char*>(data), size);

  auto cursor = ParseJobCursor(text);
  if (cursor.has_value()) {
    FUZZ_CHECK(*cursor > 0, text);
    FUZZ_CHECK(EncodeJobCursor(*cursor) == text, text + " -> " + EncodeJobCursor(*cursor));
  } else {
    FUZZ_CHECK(cursor.error().code() == StatusCode::kInvalidArgument, cursor.error().ToString());
    FUZZ_CHECK(cursor.error().message().find('\n') == std::string::npos, text);
  }
  if (size >= 8) {
    int64_t id = 0;
    std::memcpy(&id, data, 8);
    if (id > 0) {
      auto back = ParseJobCursor(EncodeJobCursor(id));
      FUZZ_CHECK(back.has_value() && *back == id, EncodeJobCursor(id));
    }
  }

  const Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || json_text_internal::NestsDeeperThan(text, kMaxJsonDepth)) return 0;
  CheckBulkBody(j);
  CheckRetryBody(j);
  CheckPauseBody(j);
  auto filter = JobFilterFromJson(j);
  if (!filter.has_value()) {
    FUZZ_CHECK(filter.error().code() == StatusCode::kInvalidArgument, filter.error().ToString());
    FUZZ_CHECK(filter.error().message().find('\n') == std::string::npos,
               filter.error().message());
    return 0;
  }
  const Json written = JobFilterToJson(*filter);
  auto again = JobFilterFromJson(written);
  FUZZ_CHECK(again.has_value(), written.dump());
  FUZZ_CHECK(JobFilterToJson(*again) == written, written.dump());
  for (BulkAction a : {BulkAction::kRetry, BulkAction::kCancel, BulkAction::kDelete}) {
    auto scope = BulkScope(a, *filter);
    if (scope.has_value()) {
      FUZZ_CHECK(!scope->states.empty(), written.dump());
    } else {
      FUZZ_CHECK(scope.error().code() == StatusCode::kInvalidArgument, written.dump());
    }
  }
  return 0;
}
