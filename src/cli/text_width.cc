#include "cli/text_width.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

#include "warden/text.h"

namespace warden::cli {
namespace {

struct Range {
  char32_t first, last;
};

// Combining marks and zero-width characters (format controls, variation
// selectors): no column of their own.
constexpr Range kZeroWidth[] = {
    {0x0300, 0x036F}, {0x0483, 0x0489}, {0x0591, 0x05BD}, {0x05BF, 0x05BF},
    {0x05C1, 0x05C2}, {0x05C4, 0x05C5}, {0x05C7, 0x05C7}, {0x0610, 0x061A},
    {0x064B, 0x065F}, {0x0670, 0x0670}, {0x06D6, 0x06DC}, {0x06DF, 0x06E4},
    {0x06E7, 0x06E8}, {0x06EA, 0x06ED}, {0x0900, 0x0902}, {0x093A, 0x093A},
    {0x093C, 0x093C}, {0x0941, 0x0948}, {0x094D, 0x094D}, {0x0951, 0x0957},
    {0x0E31, 0x0E31}, {0x0E34, 0x0E3A}, {0x0E47, 0x0E4E}, {0x1AB0, 0x1AFF},
    {0x1DC0, 0x1DFF}, {0x200B, 0x200F}, {0x202A, 0x202E}, {0x2060, 0x2064},
    {0x20D0, 0x20FF}, {0xFE00, 0xFE0F}, {0xFE20, 0xFE2F}, {0xFEFF, 0xFEFF},
    {0xE0100, 0xE01EF},
};

// East Asian wide and fullwidth characters, and emoji shown wide.
constexpr Range kWide[] = {
    {0x1100, 0x115F},   {0x231A, 0x231B},   {0x2329, 0x232A},   {0x23E9, 0x23EC},
    {0x23F0, 0x23F0},   {0x23F3, 0x23F3},   {0x25FD, 0x25FE},   {0x2614, 0x2615},
    {0x2648, 0x2653},   {0x267F, 0x267F},   {0x2693, 0x2693},   {0x26A1, 0x26A1},
    {0x26AA, 0x26AB},   {0x26BD, 0x26BE},   {0x26C4, 0x26C5},   {0x26CE, 0x26CE},
    {0x26D4, 0x26D4},   {0x26EA, 0x26EA},   {0x26F2, 0x26F3},   {0x26F5, 0x26F5},
    {0x26FA, 0x26FA},   {0x26FD, 0x26FD},   {0x2705, 0x2705},   {0x270A, 0x270B},
    {0x2728, 0x2728},   {0x274C, 0x274C},   {0x274E, 0x274E},   {0x2753, 0x2755},
    {0x2757, 0x2757},   {0x2795, 0x2797},   {0x27B0, 0x27B0},   {0x27BF, 0x27BF},
    {0x2B1B, 0x2B1C},   {0x2B50, 0x2B50},   {0x2B55, 0x2B55},   {0x2E80, 0x303E},
    {0x3041, 0x33FF},   {0x3400, 0x4DBF},   {0x4E00, 0x9FFF},   {0xA000, 0xA4CF},
    {0xA960, 0xA97F},   {0xAC00, 0xD7A3},   {0xF900, 0xFAFF},   {0xFE10, 0xFE19},
    {0xFE30, 0xFE6F},   {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6},   {0x1F004, 0x1F004},
    {0x1F0CF, 0x1F0CF}, {0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A}, {0x1F200, 0x1F251},
    {0x1F300, 0x1F64F}, {0x1F680, 0x1F6FF}, {0x1F900, 0x1F9FF}, {0x1FA70, 0x1FAFF},
    {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD},
};

template <size_t N>
bool In(const Range (&table)[N], char32_t cp) {
  const Range* r = std::upper_bound(std::begin(table), std::end(table), cp,
                                    [](char32_t c, const Range& x) { return c < x.first; });
  return r != std::begin(table) && cp <= std::prev(r)->last;
}

// The code point of the well-formed sequence of `n` bytes at `s[i]`.
char32_t Decode(std::string_view s, size_t i, size_t n) {
  static constexpr unsigned char kLead[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
  char32_t cp = static_cast<unsigned char>(s[i]) & kLead[n];
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  return cp;
}

int CodePointWidth(char32_t cp) {
  if (In(kZeroWidth, cp)) return 0;
  return In(kWide, cp) ? 2 : 1;
}

// Calls f(offset, length, width) for each character of `text`; a byte that
// is not part of well-formed UTF-8 is a character of width 1. Stops when f
// returns false.
template <typename F>
void ForEachChar(std::string_view text, F f) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = json_text_internal::Utf8Length(text, i);
    const size_t len = n == 0 ? 1 : n;
    if (!f(i, len, n == 0 ? 1 : CodePointWidth(Decode(text, i, n)))) return;
    i += len;
  }
}

}  // namespace

int DisplayWidth(std::string_view text) {
  int width = 0;
  ForEachChar(text, [&](size_t, size_t, int w) {
    width += w;
    return true;
  });
  return width;
}

std::string Cell(std::string_view text, int width) {
  const std::string clean = OneLine(text, text.size());
  std::string out;
  int used = 0;
  if (DisplayWidth(clean) <= width) {
    out = clean;
    used = DisplayWidth(clean);
  } else if (width > 0) {
    ForEachChar(clean, [&](size_t i, size_t n, int w) {
      if (used + w > width - 1) return false;  // leave a column for the marker
      out.append(clean, i, n);
      used += w;
      return true;
    });
    out += "\xE2\x80\xA6";  // U+2026, one column
    ++used;
  }
  out.append(static_cast<size_t>(std::max(0, width - used)), ' ');
  return out;
}

}  // namespace warden::cli
