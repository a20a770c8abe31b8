#include "bench_util.h"

#include <libpq-fe.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "warden/warden.h"

namespace bench {

int64_t WallMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double PeakRssMib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024.0;  // KiB on Linux
}

Args::Args(int argc, char** argv, int first) {
  for (int i = first; i < argc; ++i) {
    if (std::string_view(argv[i]).substr(0, 2) != "--") continue;
    const std::string k = argv[i] + 2;
    const bool has_value = i + 1 < argc && std::string_view(argv[i + 1]).substr(0, 2) != "--";
    values_.insert_or_assign(k, std::string(has_value ? argv[++i] : "1"));
  }
}

std::string Args::Str(const std::string& key, const std::string& def) const {
  auto it = values_.find(key);
  return it == values_.end() ? def : it->second;
}

int64_t Args::Int(const std::string& key, int64_t def) const {
  auto it = values_.find(key);
  return it == values_.end() ? def : std::atoll(it->second.c_str());
}

bool IsPostgres(const std::string& url) {
  return url.rfind("postgres://", 0) == 0 || url.rfind("postgresql://", 0) == 0;
}

namespace {

std::string SqlitePath(const std::string& url) {
  std::string path = url.rfind("sqlite:", 0) == 0 ? url.substr(7) : url;
  return path.substr(0, path.find('?'));
}

bool ExecPg(const std::string& url, const char* what, const char* sql) {
  PGconn* c = PQconnectdb(url.c_str());
  bool ok = PQstatus(c) == CONNECTION_OK;
  if (ok) {
    PGresult* r = PQexec(c, sql);
    ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
  }
  if (!ok) std::fprintf(stderr, "%s: %s", what, PQerrorMessage(c));
  PQfinish(c);
  return ok;
}

}  // namespace

bool ResetStore(const std::string& url) {
  if (IsPostgres(url)) {
    // A quiet notice, not an error, when the schema is not there yet.
    return ExecPg(url, "reset",
                  "SET client_min_messages = warning; DROP SCHEMA IF EXISTS warden CASCADE");
  }
  const std::string path = SqlitePath(url);
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix, ec);
  return true;
}

bool SettleStore(const std::string& url) {
  return !IsPostgres(url) || ExecPg(url, "checkpoint", "CHECKPOINT");
}

pid_t SpawnSelf(const std::vector<std::string>& args, int* out_fd) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> argv;
    std::string self = "/proc/self/exe";
    argv.push_back(self.data());
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(self.c_str(), argv.data());
    _exit(127);
  }
  close(fds[1]);
  *out_fd = fds[0];
  return pid;
}

std::string ReadAll(int fd) {
  std::string out;
  char buf[65536];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, n);
  close(fd);
  return out;
}

std::string ReadLine(int fd) {
  std::string line;
  char c;
  while (read(fd, &c, 1) == 1 && c != '\n') line.push_back(c);
  return line;
}

bool WaitOk(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

void Emit(const Json& line) {
  std::printf("%s\n", line.dump().c_str());
  std::fflush(stdout);
}

int64_t CountState(const std::string& url, const std::string& state) {
  auto client = warden::Client::Open(url);
  if (!client) return -1;
  auto stats = (*client)->GetStats();
  if (!stats) return -1;
  for (const auto& [s, n] : stats->jobs) {
    if (s == state) return n;
  }
  return 0;
}

}  // namespace bench
