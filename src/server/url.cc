#include "server/url.h"

#include "warden/text.h"

namespace warden::server {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

constexpr size_t kMaxTarget = 8 * 1024;

}  // namespace

Result<std::string> PercentDecode(const std::string& text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '+' && plus_is_space) {
      out += ' ';
    } else if (c == '%') {
      const int hi = i + 2 < text.size() ? HexValue(text[i + 1]) : -1;
      const int lo = i + 2 < text.size() ? HexValue(text[i + 2]) : -1;
      if (hi < 0 || lo < 0) {
        return InvalidArgument("'%' at byte " + std::to_string(i) +
                               " is not followed by two hex digits");
      }
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += c;
    }
  }
  if (out.find('\0') != std::string::npos) return InvalidArgument("it decodes to a NUL byte");
  if (const size_t at = InvalidUtf8At(out); at != std::string::npos) {
    return InvalidArgument("it decodes to text that is not UTF-8 (byte " + std::to_string(at) +
                           ")");
  }
  return out;
}

Status SplitTarget(const std::string& target, std::string* path,
                   std::vector<std::pair<std::string, std::string>>* query,
                   std::vector<std::string>* segments) {
  query->clear();
  if (segments != nullptr) segments->clear();
  if (target.size() > kMaxTarget) {
    return InvalidArgument("longer than " + std::to_string(kMaxTarget) + " bytes");
  }
  if (target.empty() || target[0] != '/') return InvalidArgument("it does not start with '/'");
  const size_t mark = target.find('?');
  const std::string raw_path = target.substr(0, mark);
  WARDEN_ASSIGN_OR_RETURN(*path, PercentDecode(raw_path, false));
  if (segments != nullptr) {
    for (size_t start = 1; start <= raw_path.size();) {
      size_t end = raw_path.find('/', start);
      if (end == std::string::npos) end = raw_path.size();
      // Decoded alone: what a segment decodes to (a '/') splits nothing.
      WARDEN_ASSIGN_OR_RETURN(std::string segment,
                              PercentDecode(raw_path.substr(start, end - start), false));
      segments->push_back(std::move(segment));
      start = end + 1;
    }
    if (!segments->empty() && segments->back().empty()) segments->pop_back();
  }
  if (mark == std::string::npos) return Status::Ok();
  std::string rest = target.substr(mark + 1);
  const size_t hash = rest.find('#');
  if (hash != std::string::npos) rest.resize(hash);
  size_t start = 0;
  while (start <= rest.size()) {
    size_t end = rest.find('&', start);
    if (end == std::string::npos) end = rest.size();
    const std::string pair = rest.substr(start, end - start);
    if (!pair.empty()) {
      const size_t eq = pair.find('=');
      auto name = PercentDecode(pair.substr(0, eq), true);
      if (!name.has_value()) return name.error().Annotate("query parameter name");
      if (name->empty()) return InvalidArgument("a query parameter has no name");
      std::string value;
      if (eq != std::string::npos) {
        auto decoded = PercentDecode(pair.substr(eq + 1), true);
        if (!decoded.has_value()) {
          return decoded.error().Annotate("query parameter '" + OneLine(*name, 40) + "'");
        }
        value = std::move(*decoded);
      }
      query->emplace_back(std::move(*name), std::move(value));
    }
    start = end + 1;
  }
  return Status::Ok();
}

}  // namespace warden::server
