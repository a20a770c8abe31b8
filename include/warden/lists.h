// Comma-separated lists ("a,b"), as queues and tasks are written on the
// command line and stored in a worker's row. Empty items are dropped.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace warden {

// `separator` between items: "," for a list to split again, ", " for a person.
std::string JoinList(const std::vector<std::string>& items, std::string_view separator = ",");
std::vector<std::string> SplitList(const std::string& text);

}  // namespace warden
