// Trace: one line per thing that happened, kept only when asked for (a
// reproduced seed); otherwise nothing is formatted.
#pragma once

#include <fmt/format.h>

#include <string>
#include <vector>

#include "scenario.h"

namespace warden::sim {

class Trace {
 public:
  explicit Trace(bool full) : full_(full) {}

  // Formatting costs: callers that build arguments check wanted() first.
  bool wanted() const { return full_; }

  template <typename... Args>
  void Line(SimUs now, fmt::format_string<Args...> f, Args&&... args) {
    if (!full_) return;
    lines_.push_back(fmt::format("[{:>9.3f}s] ", static_cast<double>(now) / 1e6) +
                     fmt::format(f, std::forward<Args>(args)...));
  }
  const std::vector<std::string>& lines() const { return lines_; }

 private:
  bool full_;
  std::vector<std::string> lines_;
};

}  // namespace warden::sim
