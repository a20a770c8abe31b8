#include "warden/lists.h"

namespace warden {

std::string JoinList(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const auto& i : items) {
    if (!out.empty()) out += separator;
    out += i;
  }
  return out;
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const size_t end = comma == std::string::npos ? text.size() : comma;
    if (end > start) out.push_back(text.substr(start, end - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace warden
