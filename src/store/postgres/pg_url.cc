#include "store/postgres/pg_url.h"

#include <algorithm>
#include <cctype>

namespace warden {
namespace {

constexpr std::string_view kMask = "***";

// A secret's place in the URL, and how to read it there.
struct Span {
  size_t begin, end;
  bool percent_encoded;  // URL form; else keyword/value (backslash escapes)
};

size_t SchemeLength(std::string_view url) {
  for (std::string_view scheme : {"postgresql://", "postgres://"}) {
    if (url.substr(0, scheme.size()) == scheme) return scheme.size();
  }
  return 0;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX decoded; a malformed sequence is kept as written.
std::string PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      const int hi = HexValue(s[i + 1]), lo = HexValue(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

std::string Unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) ++i;
    out += s[i];
  }
  return out;
}

bool IsSecretKey(std::string_view key) { return key == "password" || key == "sslpassword"; }

// The URL form. libpq reads credentials up to the first '@' before the
// first '/'; a password with a raw '@', '/' or '?' (which libpq misreads)
// is still covered by taking the last '@' before the first '/', or failing
// that before the first '?'.
void UrlSpans(std::string_view url, size_t start, std::vector<Span>& spans) {
  const std::string_view rest = url.substr(start);
  size_t at = rest.substr(0, rest.find('/')).rfind('@');
  if (at == std::string_view::npos) at = rest.substr(0, rest.find('?')).rfind('@');
  size_t query_from = start;
  if (at != std::string_view::npos) {
    const size_t colon = rest.substr(0, at).find(':');
    if (colon != std::string_view::npos) spans.push_back({start + colon + 1, start + at, true});
    query_from = start + at + 1;
  }
  const size_t q = url.find('?', query_from);
  if (q == std::string_view::npos) return;
  for (size_t p = q + 1; p <= url.size();) {
    size_t amp = url.find('&', p);
    if (amp == std::string_view::npos) amp = url.size();
    const std::string_view param = url.substr(p, amp - p);
    const size_t eq = param.find('=');
    if (eq != std::string_view::npos && IsSecretKey(PercentDecode(param.substr(0, eq)))) {
      spans.push_back({p + eq + 1, amp, true});
    }
    p = amp + 1;
  }
}

// The keyword/value form: `key = value` pairs separated by spaces; a value
// is 'quoted' (backslash escapes) or runs to the next space.
void KeywordSpans(std::string_view s, std::vector<Span>& spans) {
  auto space = [&](size_t i) {
    return i < s.size() && std::isspace(static_cast<unsigned char>(s[i])) != 0;
  };
  size_t i = 0;
  while (i < s.size()) {
    while (space(i)) ++i;
    const size_t key_begin = i;
    while (i < s.size() && s[i] != '=' && !space(i)) ++i;
    const std::string_view key = s.substr(key_begin, i - key_begin);
    while (space(i)) ++i;
    if (i >= s.size() || s[i] != '=') continue;
    ++i;
    while (space(i)) ++i;
    size_t begin = i, end = i;
    if (i < s.size() && s[i] == '\'') {
      begin = ++i;
      while (i < s.size() && s[i] != '\'') i += (s[i] == '\\' && i + 1 < s.size()) ? 2 : 1;
      end = std::min(i, s.size());
      if (i < s.size()) ++i;  // the closing quote
    } else {
      while (i < s.size() && !space(i)) i += (s[i] == '\\' && i + 1 < s.size()) ? 2 : 1;
      end = std::min(i, s.size());
    }
    if (IsSecretKey(key)) spans.push_back({begin, end, false});
  }
}

std::vector<Span> SecretSpans(std::string_view url) {
  std::vector<Span> spans;
  if (const size_t scheme = SchemeLength(url); scheme > 0) {
    UrlSpans(url, scheme, spans);
  } else {
    KeywordSpans(url, spans);
  }
  std::sort(spans.begin(), spans.end(),
            [](const Span& a, const Span& b) { return a.begin < b.begin; });
  return spans;
}

}  // namespace

namespace {

// `text` with each of `spans` (sorted by begin) replaced by the mask; a span
// that overlaps an earlier one is covered by it.
std::string MaskSpans(std::string_view text, const std::vector<Span>& spans) {
  std::string out;
  size_t copied = 0;
  for (const Span& s : spans) {
    if (s.begin < copied) continue;
    out.append(text.substr(copied, s.begin - copied));
    out.append(kMask);
    copied = s.end;
  }
  out.append(text.substr(std::min(copied, text.size())));
  return out;
}

}  // namespace

std::string RedactDbUrl(std::string_view url) {
  // Until nothing changes: in a malformed URL a password holding '/', '?'
  // and '@' can hide a second one behind the first mask (found by
  // fuzz/db_url_fuzz.cc: `postgresql://a://b@c?d:SECRET@host/db`). Each
  // pass only puts masks in place of text, so a few passes settle it.
  std::string out = MaskSpans(url, SecretSpans(url));
  for (int pass = 0; pass < 8; ++pass) {
    std::string again = MaskSpans(out, SecretSpans(out));
    if (again == out) break;
    out = std::move(again);
  }
  return out;
}

std::string RedactDbUrlsIn(std::string_view text) {
  std::string out;
  size_t i = 0;
  for (size_t a = text.find("postgres", i); a != std::string_view::npos;
       a = text.find("postgres", i)) {
    if (SchemeLength(text.substr(a)) == 0) {
      out.append(text.substr(i, a + 1 - i));
      i = a + 1;
      continue;
    }
    // To the next space, quotes included: a quote may be part of the
    // password (found by fuzz/db_url_fuzz.cc), and the rest of a URL that
    // a message quotes loses nothing by keeping the closing quote.
    size_t end = a;
    while (end < text.size() && std::isspace(static_cast<unsigned char>(text[end])) == 0) ++end;
    out.append(text.substr(i, a - i));
    out.append(RedactDbUrl(text.substr(a, end - a)));
    i = end;
  }
  out.append(text.substr(i));
  std::vector<Span> spans;
  KeywordSpans(out, spans);
  return MaskSpans(out, spans);
}

std::vector<std::string> DbSecrets(std::string_view url) {
  std::vector<std::string> secrets;
  for (const Span& s : SecretSpans(url)) {
    const std::string_view raw = url.substr(s.begin, s.end - s.begin);
    if (raw.empty()) continue;
    secrets.emplace_back(raw);
    std::string decoded = s.percent_encoded ? PercentDecode(raw) : Unescape(raw);
    if (!decoded.empty() && decoded != raw) secrets.push_back(std::move(decoded));
  }
  return secrets;
}

std::string ScrubSecrets(std::string_view text, const std::vector<std::string>& secrets) {
  std::string out(text);
  // Longest first: a secret that contains another is replaced whole.
  std::vector<std::string> sorted = secrets;
  std::sort(sorted.begin(), sorted.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  for (const std::string& secret : sorted) {
    if (secret.empty()) continue;
    for (size_t p = out.find(secret); p != std::string::npos;
         p = out.find(secret, p + kMask.size())) {
      out.replace(p, secret.size(), kMask);
    }
  }
  return out;
}

}  // namespace warden
