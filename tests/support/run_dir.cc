#include "run_dir.h"

#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "env/process.h"
#include "pg_test_db.h"
#include "proc.h"

namespace warden::testing {

std::string TempRoot() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

std::string MakeRunDir(const std::string& prefix, std::string* error) {
  std::string templ = TempRoot() + "/" + prefix + "-XXXXXX";
  if (mkdtemp(templ.data()) == nullptr || chmod(templ.c_str(), 0755) != 0) {
    *error = templ + ": " + std::strerror(errno);
    return "";
  }
  std::ofstream(templ + "/owner") << getpid() << " " << warden::ProcessStartTime(getpid())
                                  << "\n";
  return templ;
}

void RemoveOwner(const std::string& run_dir) { std::remove((run_dir + "/owner").c_str()); }

std::vector<std::string> SweepOrphanedRuns(
    const std::string& prefix, const std::function<void(const std::string&, pid_t)>& also) {
  std::vector<std::string> swept;
  glob_t g{};
  if (glob((TempRoot() + "/" + prefix + "-*/owner").c_str(), 0, nullptr, &g) != 0) {
    globfree(&g);
    return swept;
  }
  std::vector<std::string> owners(g.gl_pathv, g.gl_pathv + g.gl_pathc);
  globfree(&g);
  for (const std::string& owner : owners) {
    std::istringstream in(proc::ReadFile(owner));
    long pid = 0;
    long long start = -1;
    if (!(in >> pid >> start) || pid <= 0 || pid == getpid() ||
        !warden::ProcessProvablyGone(static_cast<int>(pid), start)) {
      continue;
    }
    const std::string dir = owner.substr(0, owner.rfind('/'));
    if (access((dir + "/pg/bindir").c_str(), F_OK) == 0) {
      (void)RunPgCluster("stop", dir + "/pg", dir + "/stop");
    }
    if (also) also(dir, static_cast<pid_t>(pid));
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    swept.push_back(dir);
  }
  return swept;
}

}  // namespace warden::testing
