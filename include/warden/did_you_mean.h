// "Did you mean": the closest known name to a mistyped one, for errors
// about names a person typed (`warden stat` -> 'stats', `add --queu` ->
// '--queue', a job line's "queu" field -> "queue").
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace warden {

// Edits (insert, delete, replace one character, or swap two adjacent ones)
// that turn `a` into `b`.
size_t EditDistance(std::string_view a, std::string_view b);

// The candidate closest to `typed`, if close enough to be a typo: at most
// one edit for a word of up to four characters (leading dashes not
// counted), two for a longer one; ties go to the first. "" if none.
std::string Closest(std::string_view typed, const std::vector<std::string>& candidates);

}  // namespace warden
