// JSON to text for storage and for jobs' stdin. Never throws: bytes that are
// not valid UTF-8 (a command's binary stdout, a string cut mid-character by
// a tail) become U+FFFD instead of aborting the thread that writes them.
#pragma once

#include <string>

#include "warden/job.h"

namespace warden {

inline std::string JsonText(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// JSON read back from a store; text that does not parse comes back as a
// JSON string rather than being lost. Empty (SQL NULL) is null.
inline Json ParseStoredJson(const std::string& text) {
  if (text.empty()) return nullptr;
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Json(text);
  return j;
}

}  // namespace warden
