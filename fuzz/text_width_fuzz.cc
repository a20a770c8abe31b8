// Names shown in tables (issue 19: cut by display width, not bytes):
// DisplayWidth and Cell over any bytes.
// Checks: a cell is exactly `width` columns (for widths of 2 and more),
// one line, valid UTF-8; a name that fits is shown whole; a cut one ends
// with "…" after a prefix of whole characters.
#include "cli/text_width.h"
#include "warden/text.h"
#include "fuzz_check.h"

namespace warden::fuzz {
namespace {

bool ValidUtf8(const std::string& s) {
  try {
    (void)Json(s).dump();
    return true;
  } catch (const Json::exception&) {
    return false;
  }
}

}  // namespace
}  // namespace warden::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace warden;
  using namespace warden::fuzz;
  if (size == 0) return 0;
  const int width = 2 + data[0] % 40;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const int full = cli::DisplayWidth(text);
  FUZZ_CHECK(full >= 0, text);
  const std::string cell = cli::Cell(text, width);
  FUZZ_CHECK(cli::DisplayWidth(cell) == width, std::to_string(width) + ": [" + cell + "]");
  FUZZ_CHECK(IsOneLine(cell) && ValidUtf8(cell), cell);
  const std::string marker = "\xE2\x80\xA6";  // …
  // Text that a cell shows as it is: what OneLine leaves unchanged (no
  // control character, line or paragraph break, or byte that is not UTF-8).
  const bool plain = OneLine(text, text.size()) == text;
  if (plain && full <= width) {
    FUZZ_CHECK(cell.compare(0, text.size(), text) == 0, text + " -> " + cell);
  }
  if (plain && full > width) {
    const size_t end = cell.find_last_not_of(' ');
    FUZZ_CHECK(end != std::string::npos && end + 1 >= marker.size() &&
                   cell.compare(end + 1 - marker.size(), marker.size(), marker) == 0,
               text + " -> " + cell);
    const std::string kept = cell.substr(0, end + 1 - marker.size());
    FUZZ_CHECK(text.compare(0, kept.size(), kept) == 0, text + " -> " + cell);
  }
  return 0;
}
