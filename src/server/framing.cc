#include "server/framing.h"

#include <cctype>

#include "warden/text.h"

namespace warden::server {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool IsChunked(std::string_view coding) {
  constexpr std::string_view kChunked = "chunked";
  if (coding.size() != kChunked.size()) return false;
  for (size_t i = 0; i < coding.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(coding[i])) != kChunked[i]) return false;
  }
  return true;
}

}  // namespace

Status CheckFraming(const Framing& f) {
  if (f.transfer_encodings.empty()) return Status::Ok();
  // The codings of every field, as one list (RFC 9110 §5.3); empty
  // elements are allowed and skipped (§5.6.1).
  std::vector<std::string_view> codings;
  for (std::string_view value : f.transfer_encodings) {
    while (true) {
      const size_t comma = value.find(',');
      const std::string_view item = Trim(value.substr(0, comma));
      if (!item.empty()) codings.push_back(item);
      if (comma == std::string_view::npos) break;
      value.remove_prefix(comma + 1);
    }
  }
  std::string all;
  for (std::string_view v : f.transfer_encodings) all += (all.empty() ? "" : ", ") + std::string(v);
  const std::string quoted = "Transfer-Encoding '" + OneLine(all, 60) + "'";
  if (f.version < 11)
    return InvalidArgument(quoted + " on HTTP/1.0, which has no transfer codings");
  if (f.content_length) {
    return InvalidArgument(quoted + " with Content-Length: the body's end would be ambiguous");
  }
  if (codings.size() != 1 || !IsChunked(codings[0])) {
    return InvalidArgument(quoted +
                           ": this server takes only 'chunked' (a body must end where "
                           "both it and any proxy agree)");
  }
  return Status::Ok();
}

}  // namespace warden::server
