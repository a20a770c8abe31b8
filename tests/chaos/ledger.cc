#include "ledger.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace chaos {

int64_t WallMs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

LedgerWriter::LedgerWriter(const std::string& path) {
  fd_ = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    std::perror(("ledger " + path).c_str());
    std::abort();
  }
}

LedgerWriter::~LedgerWriter() {
  if (fd_ >= 0) close(fd_);
}

void LedgerWriter::Write(const char* event, const RunId& run, int step,
                         const char* detail, int64_t at_ms) {
  char line[256];
  const int n = std::snprintf(
      line, sizeof line, "%s %lld %d %lld %lld %d %lld %d %s\n", event,
      static_cast<long long>(run.job), run.attempt,
      static_cast<long long>(run.token),
      static_cast<long long>(at_ms != 0 ? at_ms : WallMs()),
      static_cast<int>(getpid()), static_cast<long long>(run.worker), step,
      detail);
  // One write: O_APPEND makes it land whole after every earlier line.
  if (n <= 0 || write(fd_, line, static_cast<size_t>(n)) != n) std::abort();
}

std::vector<LedgerEvent> ReadLedger(const std::string& path) {
  std::vector<LedgerEvent> out;
  std::ifstream in(path);
  std::string text;
  while (std::getline(in, text)) {
    if (in.eof()) break;  // no newline: a torn last line
    std::istringstream line(text);
    LedgerEvent e;
    if (line >> e.event >> e.job >> e.attempt >> e.token >> e.ms >> e.pid >>
        e.worker >> e.step >> e.detail) {
      out.push_back(std::move(e));
    }
  }
  return out;
}

}  // namespace chaos
