// Names that come from outside: the enum names a user types or a store
// returns (job states for `jobs --state`, retry policies for --retry,
// deliveries, error kinds, worker states), comma lists (`worker --queues`),
// and the task, queue and key names the Client validates.
// Checks: a name parses only to the value it names; SplitList drops empty
// items and round-trips through JoinList; ValidateSpec accepts a name iff
// it is non-empty (where required), at most kMaxNameBytes, UTF-8 without
// NUL or other control bytes (PostgreSQL truncates at NUL and refuses
// invalid UTF-8), with no character that does not show (zero-width,
// direction controls, C1), and one a `warden worker` can name: no ',' in a queue
// (--queues a,b), no '=' in a task (--task NAME=COMMAND); it refuses the
// rest with one InvalidArgument line.
#include "warden/lists.h"
#include "fuzz_check.h"
#include "warden/text.h"

namespace warden::fuzz {
namespace {

template <typename E>
void CheckEnum(const std::string& text, std::optional<E> (*parse)(const std::string&),
               const char* (*name)(E)) {
  const std::optional<E> v = parse(text);
  if (v) FUZZ_CHECK(name(*v) == text, text);
}

void CheckList(const std::string& text) {
  const std::vector<std::string> items = SplitList(text);
  std::string expected;  // `text` without empty items
  for (const std::string& i : items) {
    FUZZ_CHECK(!i.empty() && i.find(',') == std::string::npos, text);
    expected += (expected.empty() ? "" : ",") + i;
  }
  FUZZ_CHECK(JoinList(items) == expected, text);
  FUZZ_CHECK(SplitList(JoinList(items)) == items, text);
  size_t chars = 0;
  for (const char c : text) chars += c != ',';
  FUZZ_CHECK(expected.size() - (items.empty() ? 0 : items.size() - 1) == chars, text);
}

bool ValidUtf8(std::string_view s) {
  try {
    (void)Json(std::string(s)).dump();
    return true;
  } catch (const Json::exception&) {
    return false;
  }
}

void CheckName(const std::string& text) {
  const bool fits = text.size() <= kMaxNameBytes;
  for (int field = 0; field < 4; ++field) {
    JobSpec spec;
    spec.task = "t";
    std::string* target[] = {&spec.task, &spec.queue, &spec.unique_key, &spec.concurrency_key};
    *target[field] = text;
    const bool required = field < 2;
    const Status s = ValidateSpec(spec);
    // What `warden worker --queues Q1,Q2` and `--task NAME=COMMAND` can name.
    const bool servable = (field != 1 || text.find(',') == std::string::npos) &&
                          (field != 0 || text.find('=') == std::string::npos);
    if (s.ok()) {
      FUZZ_CHECK(fits && (!required || !text.empty()), text);
      FUZZ_CHECK(IsOneLine(text) && ValidUtf8(text), "accepted as a name: " + text);
      for (const char* hidden : {"\u200B", "\u200D", "\u2060", "\uFEFF", "\u202E", "\u2066",
                                 "\u2069", "\u0085", "\u200F"}) {
        FUZZ_CHECK(text.find(hidden) == std::string::npos, "accepted as a name: " + text);
      }
      if (field == 1) FUZZ_CHECK(SplitList(text) == std::vector{text}, "queue " + text);
      FUZZ_CHECK(servable, "accepted as a name: " + text);
    } else {
      CheckRefusal(s);
      FUZZ_CHECK(!fits || (required && text.empty()) || !IsOneLine(text) || !ValidUtf8(text) ||
                     !servable || FirstHiddenCharacter(text).code_point != 0,
                 s.ToString() + " for " + text);
    }
  }
}

}  // namespace
}  // namespace warden::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace warden;
  using namespace warden::fuzz;
  const std::string text(reinterpret_cast<const char*>(data), size);
  CheckEnum<JobState>(text, ParseJobState, JobStateName);
  CheckEnum<ErrorKind>(text, ParseErrorKind, ErrorKindName);
  CheckEnum<Delivery>(text, ParseDelivery, DeliveryName);
  CheckEnum<RetryPolicy>(text, ParseRetryPolicy, RetryPolicyName);
  CheckEnum<WorkerState>(text, ParseWorkerState, WorkerStateName);
  CheckList(text);
  CheckName(text);
  return 0;
}
