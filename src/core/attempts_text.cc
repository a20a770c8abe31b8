#include <string>

#include "warden/job.h"

namespace warden {

std::string AttemptsText(const JobInfo& j) {
  std::string text = std::to_string(j.charged) + "/" + std::to_string(j.max_attempts);
  if (j.attempt != j.charged) {
    text += " (" + std::to_string(j.attempt) + (j.attempt == 1 ? " run)" : " runs)");
  }
  return text;
}

}  // namespace warden
