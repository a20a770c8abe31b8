// Reading what processes wrote: logs and ledgers that others may be
// appending to while a test reads them.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace warden::testing {

// The last `lines` lines of `text` (all of it if shorter), for failure
// messages.
std::string Tail(const std::string& text, size_t lines);

// Every line of `text` that ends in '\n', without it: a line still being
// appended (no newline yet) is not one.
std::vector<std::string> CompleteLines(const std::string& text);

}  // namespace warden::testing
