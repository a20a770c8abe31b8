// Comma-separated lists ("a,b"), as queues and tasks are written on the
// command line and stored in a worker's row. Empty items are dropped.
#pragma once

#include <string>
#include <vector>

namespace warden {

std::string JoinList(const std::vector<std::string>& items);
std::vector<std::string> SplitList(const std::string& text);

}  // namespace warden
