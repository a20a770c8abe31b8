// JSON read back from a store (payload, checkpoint, result): text that a
// damaged or hand-edited database may hold. Checks: ParseStoredJson never
// throws; it returns exactly nlohmann's reading of valid JSON nested at
// most 512 deep and free of NUL bytes (nlohmann stops reading at one),
// null for empty text, and otherwise the text as a string
// (its bytes that are not UTF-8 as U+FFFD); what it returns can be printed
// by a strict dump() (`warden jobs show`, a command job's stdin), nests at
// most 512 deep (dump() recurses), and stores again (JsonText) to valid
// JSON that reads back stably.
#include "warden/text.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace warden;
  using namespace warden::fuzz;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const Json j = ParseStoredJson(text);
  const Json reference = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  bool utf8 = true;
  try {
    (void)Json(text).dump();
  } catch (const Json::exception&) {
    utf8 = false;
  }
  if (text.empty()) {
    FUZZ_CHECK(j.is_null(), text);
  } else if (!reference.is_discarded() && Depth(reference) <= 512 &&
             text.find('\0') == std::string::npos) {
    FUZZ_CHECK(j == reference, text);
  } else if (utf8) {
    FUZZ_CHECK(j.is_string() && j.get<std::string>() == text, text);
  } else {
    FUZZ_CHECK(j.is_string() && j.get<std::string>().size() >= text.size(), text);
  }
  FUZZ_CHECK(Depth(j) <= 512, text);
  try {
    (void)j.dump(2);
  } catch (const Json::exception& e) {
    FUZZ_CHECK(false, std::string(e.what()) + " for " + text);
  }
  const std::string stored = JsonText(j);
  const Json back = ParseStoredJson(stored);
  FUZZ_CHECK(JsonText(back) == stored, text + " -> " + stored);
  FUZZ_CHECK(!Json::parse(stored, nullptr, false).is_discarded(), stored);
  return 0;
}
