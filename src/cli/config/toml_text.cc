#include "cli/config/toml_text.h"

#include <cstdio>

#include "warden/text.h"

namespace warden::cli::config {

std::string TomlString(std::string_view text) {
  std::string out = "\"";
  for (const char c : ValidUtf8(text)) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (u < 0x20 || u == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04X", u);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string TomlKey(std::string_view key) {
  const bool bare = !key.empty() && key.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij"
                                                          "klmnopqrstuvwxyz0123456789_-") ==
                                        std::string_view::npos;
  return bare ? std::string(key) : TomlString(key);
}

std::string TomlValue(const Json& value) {
  if (value.is_string()) return TomlString(value.get<std::string>());
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_number_integer()) return std::to_string(value.get<int64_t>());
  if (value.is_array()) {
    std::string out = "[";
    for (const Json& item : value) {
      if (out.size() > 1) out += ", ";
      out += TomlValue(item);
    }
    return out + "]";
  }
  return "\"\"";
}

}  // namespace warden::cli::config
