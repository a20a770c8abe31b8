// Display width of text in a terminal, for lining up table columns: names
// are UTF-8, and a byte count neither lines them up nor cuts them safely.
//
// Widths follow wcwidth(3) for what names hold in practice: most code
// points are one column, combining marks and zero-width characters none,
// East Asian wide and fullwidth characters and emoji two. The tables are
// warden's own (not the locale's), so a table looks the same whatever
// LANG says.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace warden::cli {

// The columns `text` takes; text that is not UTF-8 counts a column a byte.
int DisplayWidth(std::string_view text);

// `text` on one line, at most `width` columns wide, padded with spaces to
// `width`: a longer text is cut before a whole character and ends with
// "…", so that two names cut alike are still seen to be cut. Line breaks,
// control characters and bytes that are not UTF-8 are shown as in OneLine.
std::string Cell(std::string_view text, int width);

}  // namespace warden::cli
