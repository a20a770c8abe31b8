// A request target ("/v1/jobs?state=dead&q=a%20b") split into its decoded
// path and query parameters. Outside input: every malformed form is an
// error, never a guess (fuzz/url_fuzz.cc).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "warden/status.h"

namespace warden::server {

// Decodes %XX escapes (and, in a query, '+' as a space). The result must be
// UTF-8 without NUL: a name with a NUL or a broken character is refused
// here, as `warden add` refuses it.
Result<std::string> PercentDecode(const std::string& text, bool plus_is_space);

// `target` must be origin-form ("/path?query"), at most 8 KiB. `segments`
// (if given) gets the path's segments, split at its '/' *before* each is
// decoded: "/v1/queues/a%2Fb/pause" is {"v1", "queues", "a/b", "pause"}, so
// a name with '/' in it, or one that is "." or "..", stays one segment. A
// trailing '/' adds no empty segment.
Status SplitTarget(const std::string& target, std::string* path,
                   std::vector<std::pair<std::string, std::string>>* query,
                   std::vector<std::string>* segments = nullptr);

}  // namespace warden::server
