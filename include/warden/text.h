// Text that crosses warden's edges: JSON parsed from outside (payloads,
// the `checkpoint JSON` / `result JSON` lines of command jobs), JSON written
// to storage and to jobs' stdin, JSON read back from a store, and the
// excerpts of outside text that error messages quote.
//
// nlohmann's parser is iterative, but dump(), operator== and copies recurse
// once per level: JSON is refused (outside) or kept as text (stored) when it
// nests deeper than kMaxJsonDepth, so nothing recurses past that.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "warden/job.h"
#include "warden/status.h"

namespace warden {

// The deepest JSON warden accepts: 512 nested arrays or objects.
inline constexpr int kMaxJsonDepth = 512;

namespace json_text_internal {

// Length (1-4) of the well-formed UTF-8 sequence at `s[i]` (RFC 3629: no
// overlong forms, surrogates or code points past U+10FFFF), or 0.
inline size_t Utf8Length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  size_t n = 0;
  uint32_t cp = 0, min = 0;
  if ((c & 0xE0) == 0xC0) n = 2, cp = c & 0x1F, min = 0x80;
  else if ((c & 0xF0) == 0xE0) n = 3, cp = c & 0x0F, min = 0x800;
  else if ((c & 0xF8) == 0xF0) n = 4, cp = c & 0x07, min = 0x10000;
  else return 0;
  if (s.size() - i < n) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

// Whether JSON `text` opens more than `max` arrays or objects at once,
// counting brackets outside strings: exact for valid JSON, no recursion.
inline bool NestsDeeperThan(std::string_view text, int max) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

}  // namespace json_text_internal

// The offset of the first byte of `text` that is not part of well-formed
// UTF-8, or std::string_view::npos when it is all UTF-8.
inline size_t InvalidUtf8At(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = json_text_internal::Utf8Length(text, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

// `text` with every byte that is not part of well-formed UTF-8 replaced by
// U+FFFD (as JsonText does for strings).
inline std::string ValidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t n = json_text_internal::Utf8Length(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
  return out;
}

// Outside text fit to quote in a one-line message: at most `max` bytes of
// it (never cutting a character; "..." marks a cut), valid UTF-8, line
// breaks and tabs as spaces, other control characters (C0, DEL, C1) and
// bytes that are not UTF-8 as '?'.
inline std::string OneLine(std::string_view text, size_t max) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t n = json_text_internal::Utf8Length(text, i);
    if (out.size() + (n == 0 ? 1 : n) > max) break;
    const auto c = static_cast<unsigned char>(text[i]);
    const auto c1 = n == 2 ? static_cast<unsigned char>(text[i + 1]) : 0;
    if (n == 0) {
      out += '?';
      n = 1;
    } else if (c == '\n' || c == '\r' || c == '\t' ||
               (n == 3 && text.substr(i, 2) == "\xE2\x80" &&
                (text[i + 2] == '\xA8' || text[i + 2] == '\xA9'))) {  // U+2028, U+2029
      out += ' ';
    } else if (c < 0x20 || c == 0x7f || (c == 0xC2 && c1 < 0xA0)) {
      out += '?';
    } else {
      out.append(text, i, n);
    }
    i += n;
  }
  if (i < text.size()) out += "...";
  return out;
}

// The first character of `text` (UTF-8) that a name must not hold because
// it does not show, or changes how what follows shows: C1 controls
// (U+0080-U+009F), zero-width characters (U+200B-U+200D, U+2060, U+FEFF),
// direction marks (U+200E, U+200F), embeddings and overrides
// (U+202A-U+202E) and isolates (U+2066-U+2069). `mail` and `ma\u200bil`
// would list as two identical queues; U+202E would show `liam` for `mail`.
// Returns its code point, what it is and where, or code_point 0 if none.
struct HiddenCharacter {
  char32_t code_point = 0;
  const char* what = "";
  size_t at = 0;      // its offset in bytes
  size_t length = 0;  // its length in bytes
};
inline HiddenCharacter FirstHiddenCharacter(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = json_text_internal::Utf8Length(text, i);
    if (n == 0) {
      ++i;
      continue;
    }
    const auto b = [&](size_t k) {
      return static_cast<char32_t>(static_cast<unsigned char>(text[i + k]));
    };
    // Four-byte characters are above U+FFFF: none of those below.
    const char32_t cp = n == 1   ? b(0)
                        : n == 2 ? ((b(0) & 0x1F) << 6) | (b(1) & 0x3F)
                        : n == 3 ? ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F)
                                 : 0x10000;
    const char* what = "";
    if (cp >= 0x80 && cp <= 0x9F) what = "a C1 control character";
    if (cp >= 0x200B && cp <= 0x200D) what = "a zero-width character";
    if (cp == 0x2060 || cp == 0xFEFF) what = "a zero-width character";
    if (cp == 0x200E || cp == 0x200F) what = "a direction mark";
    if (cp >= 0x202A && cp <= 0x202E) what = "a direction embedding or override";
    if (cp >= 0x2066 && cp <= 0x2069) what = "a direction isolate";
    if (*what != '\0') return {cp, what, i, n};
    i += n;
  }
  return {};
}

// "U+200B".
inline std::string CodePointName(char32_t cp) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string digits;
  for (; cp != 0 || digits.size() < 4; cp >>= 4) digits.insert(digits.begin(), kHex[cp & 15]);
  return "U+" + digits;
}

// `text` with each character FirstHiddenCharacter finds as "<U+200B>", so
// that a message quoting it shows what is there.
inline std::string ShowHidden(std::string_view text) {
  std::string out;
  for (HiddenCharacter h = FirstHiddenCharacter(text); h.code_point != 0;
       h = FirstHiddenCharacter(text)) {
    out.append(text.substr(0, h.at));
    out += '<';
    out += CodePointName(h.code_point);
    out += '>';
    text.remove_prefix(h.at + h.length);
  }
  out.append(text);
  return out;
}

// Strict JSON from outside (a payload, a command job's `checkpoint JSON` or
// `result JSON` line): refuses text that is not one valid JSON document,
// is not UTF-8, holds a NUL byte, or nests deeper than kMaxJsonDepth
// (checked before parsing, without recursion). Errors are kInvalidArgument,
// one line of at most about 150 bytes, phrased to follow a subject:
// "the payload " + message reads
// "the payload is not valid JSON: {bad", "the payload nests deeper than 512
// levels", "the payload is not valid JSON: not UTF-8 at byte 3 (0xe9)".
inline Result<Json> ParseJsonText(std::string_view text) {
  if (json_text_internal::NestsDeeperThan(text, kMaxJsonDepth)) {
    return InvalidArgument("nests deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  }
  // nlohmann's lexer takes a NUL byte for the end of input, so "1\0junk"
  // would read as 1 and drop the rest. JSON text never holds a raw NUL.
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos) {
    return InvalidArgument("is not valid JSON: a NUL byte at byte " + std::to_string(nul));
  }
  Json j = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (!j.is_discarded()) return j;
  // Valid JSON is UTF-8 throughout; say so when that is what is wrong.
  if (const size_t at = InvalidUtf8At(text); at != std::string_view::npos) {
    char detail[64];
    std::snprintf(detail, sizeof detail, "not UTF-8 at byte %zu (0x%02x)", at,
                  static_cast<unsigned>(static_cast<unsigned char>(text[at])));
    return InvalidArgument(std::string("is not valid JSON: ") + detail);
  }
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return InvalidArgument("is not valid JSON: the text is empty");
  }
  return InvalidArgument("is not valid JSON: " + OneLine(text, 80));
}

// JSON to text for storage and for jobs' stdin. Never throws: bytes that are
// not valid UTF-8 (a command's binary stdout, a string cut mid-character by
// a tail) become U+FFFD instead of aborting the thread that writes them.
// The value must nest at most kMaxJsonDepth deep (what ParseJsonText,
// ParseStoredJson and ValidateSpec let in).
inline std::string JsonText(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// JSON read back from a store. Never throws, and what it returns can be
// dumped (strictly) and compared safely. Empty (SQL NULL) is null; text
// that ParseJsonText refuses (damaged, hand-written, deeper than
// kMaxJsonDepth) comes back as a JSON string of that text rather than being
// lost, its bytes that are not UTF-8 replaced by U+FFFD.
inline Json ParseStoredJson(const std::string& text) {
  if (text.empty()) return nullptr;
  Result<Json> j = ParseJsonText(text);
  if (j.has_value()) return std::move(j).value();
  return Json(ValidUtf8(text));
}

}  // namespace warden
