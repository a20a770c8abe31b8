// Database URLs and the text around them (issue 19: never show a
// password): RedactDbUrl, RedactDbUrlsIn, DbSecrets, ScrubSecrets.
// Checks: nothing crashes; redaction is idempotent; scrubbing a text of
// its own secrets leaves none; a URL built from the input (user, password,
// host: what a command line can hold) with its password in the user info
// or the query string is redacted to exactly the URL with `***` for it,
// and the password (when it cannot be told from the rest of the URL) is
// gone from RedactDbUrlsIn of a sentence that quotes the URL and from
// ScrubDbSecrets of text that quotes it whole.
#include "fuzz_check.h"
#include "store/postgres/pg_url.h"

namespace warden::fuzz {
namespace {

// The part of `text` before the first of `stops`, a space or a control
// byte (or all of it): what a URL given on a command line can hold.
std::string Until(std::string_view text, std::string_view stops) {
  size_t n = 0;
  while (n < text.size() && static_cast<unsigned char>(text[n]) > 0x20 &&
         text[n] != 0x7f && stops.find(text[n]) == std::string_view::npos) {
    ++n;
  }
  return std::string(text.substr(0, n));
}

void CheckBuiltUrl(const std::string& input) {
  // user \x01 password \x01 host: the password may hold anything but the
  // separators a URL parser splits on, which would make it another field.
  const size_t a = input.find('\x01');
  const size_t b = a == std::string::npos ? a : input.find('\x01', a + 1);
  if (b == std::string::npos) return;
  const std::string user = Until(input.substr(0, a), ":@/?#&=");
  const std::string pass = Until(input.substr(a + 1, b - a - 1), "@/?#&=");
  const std::string host = Until(input.substr(b + 1), ":@/?#&=");
  if (pass.empty()) return;
  const std::string url1 = "postgresql://" + user + ":" + pass + "@" + host + "/app";
  const std::string url2 =
      "postgres://" + user + "@" + host + "/app?sslmode=disable&password=" + pass;
  const std::string want1 = "postgresql://" + user + ":***@" + host + "/app";
  const std::string want2 = "postgres://" + user + "@" + host + "/app?sslmode=disable&password=***";
  FUZZ_CHECK(RedactDbUrl(url1) == want1, url1 + " -> " + RedactDbUrl(url1));
  FUZZ_CHECK(RedactDbUrl(url2) == want2, url2 + " -> " + RedactDbUrl(url2));
  // In text, the password must be gone wherever it cannot be told from the
  // rest: a short one, or one that spells part of the redacted sentences
  // themselves (`pp':` is in `…/app': refused`), proves nothing.
  for (const auto& [url, want] : {std::pair{url1, want1}, std::pair{url2, want2}}) {
    const std::string expected =
        "cannot use '" + want + "': refused libpq: bad token \"" + want + "\"";
    if (pass.size() < 4 || expected.find(pass) != std::string::npos) continue;
    const std::string said = RedactDbUrlsIn("cannot use '" + url + "': refused");
    // (A quote after a query's password may be masked with it: quotes can
    // be part of a password.)
    FUZZ_CHECK(said.find(pass) == std::string::npos, url + " -> " + said);
    const std::string scrubbed = ScrubDbSecrets("libpq: bad token \"" + url + "\"", url);
    FUZZ_CHECK(scrubbed.find(pass) == std::string::npos, url + " -> " + scrubbed);
  }
}

}  // namespace
}  // namespace warden::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace warden;
  using namespace warden::fuzz;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string once = RedactDbUrl(text);
  FUZZ_CHECK(RedactDbUrl(once) == once, text + " -> " + once);
  const std::string in_text = RedactDbUrlsIn(text);
  FUZZ_CHECK(RedactDbUrlsIn(in_text) == in_text, text + " -> " + in_text);
  for (const std::string& secret : DbSecrets(text)) {
    FUZZ_CHECK(!secret.empty(), text);
    if (secret.find('*') != std::string::npos) continue;  // may meet the mask's own stars
    FUZZ_CHECK(ScrubDbSecrets(text, text).find(secret) == std::string::npos, text);
  }
  CheckBuiltUrl(text);
  return 0;
}
