#include "store/migrations.h"

#include <algorithm>
#include <string>

namespace warden {

namespace {

// NNNN_what.sql: the number, or 0 when the name is not so.
int VersionOf(std::string_view name) {
  if (name.size() < 10 || name[4] != '_' || !name.ends_with(".sql")) return 0;
  int v = 0;
  for (char c : name.substr(0, 4)) {
    if (c < '0' || c > '9') return 0;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace

Result<std::vector<Migration>> NumberedMigrations(std::span<const MigrationFile> files, int want) {
  std::vector<Migration> out;
  for (const MigrationFile& f : files) {
    const int v = VersionOf(f.name);
    if (v == 0) {
      return Internal("migration file '" + std::string(f.name) +
                      "' is not named NNNN_what.sql with NNNN from 0001");
    }
    out.push_back(Migration{v, f.name, f.bytes});
  }
  std::sort(out.begin(), out.end(),
            [](const Migration& a, const Migration& b) { return a.version < b.version; });
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].version != static_cast<int>(i) + 1) {
      return Internal("migration files are not numbered 1, 2, 3, ... without a gap: '" +
                      std::string(out[i].name) + "' where " + std::to_string(i + 1) +
                      " was due");
    }
  }
  if (static_cast<int>(out.size()) != want) {
    return Internal("this build has " + std::to_string(out.size()) +
                    " migration files, and its code was written for schema " +
                    std::to_string(want));
  }
  return out;
}

}  // namespace warden
