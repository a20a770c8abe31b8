// Payload JSON as `warden add TASK PAYLOAD` (or `-` and stdin) takes it, and
// as the Client validates and stores it. Checks: the CLI accepts exactly the
// valid JSON (by nlohmann's own reading) nested at most 512 deep and free of
// NUL bytes (nlohmann's reading stops at one), and refuses
// the rest with one InvalidArgument line (too deep or not JSON); an
// accepted payload either passes ValidateSpec or is refused for its size
// alone (JsonText over kMaxPayloadBytes); it reads back from its stored text
// unchanged, and a command's stdin (a strict dump()) can be written.
#include <sstream>

#include "cli/cli.h"
#include "warden/text.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace warden;
  using namespace warden::fuzz;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::istringstream in(text);
  const Result<JobSpec> spec = cli::ParseAddArgs({"t", "-"}, in);
  const Json reference = Json::parse(text, nullptr, /*allow_exceptions=*/false);

  if (!spec.has_value()) {
    CheckRefusal(spec.error());
    // Depth is judged while parsing, so too deep may also be malformed.
    const bool too_deep = spec.error().message().find("deeper") != std::string::npos;
    // nlohmann stops reading at a NUL byte; warden refuses text holding one.
    const bool nul = text.find('\0') != std::string::npos;
    FUZZ_CHECK(reference.is_discarded() || nul || (too_deep && Depth(reference) > 512),
               spec.error().message() + " / " + text);
    return 0;
  }
  const Json& payload = spec->payload;
  FUZZ_CHECK(!reference.is_discarded() && payload == reference, text);
  FUZZ_CHECK(text.find('\0') == std::string::npos, text);
  FUZZ_CHECK(Depth(payload) <= 512, text);

  const std::string stored = JsonText(payload);
  const Status valid = ValidateSpec(*spec);
  if (!valid.ok()) {
    CheckRefusal(valid);
    FUZZ_CHECK(stored.size() > kMaxPayloadBytes, valid.ToString());
  } else {
    FUZZ_CHECK(stored.size() <= kMaxPayloadBytes, text);
  }
  FUZZ_CHECK(ParseStoredJson(stored) == payload, stored);
  try {
    FUZZ_CHECK(Json::parse(payload.dump()) == payload, text);
  } catch (const Json::exception& e) {
    FUZZ_CHECK(false, std::string(e.what()));
  }
  return 0;
}
