// The row decoder both backends share (store/row_decode.h) reads columns by
// position: the backends' SELECT lists must name the same columns, in the
// same order, as many as it reads.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "store/postgres/pg_rows.h"
#include "store/row_decode.h"
#include "store/sqlite/rows.h"

namespace warden {
namespace {

// "j.id, j.queue" with prefix "j." -> {"id", "queue"}.
std::vector<std::string> Names(const std::string& list, const std::string& prefix) {
  std::vector<std::string> names;
  std::stringstream in(list);
  std::string name;
  while (std::getline(in, name, ',')) {
    name.erase(0, name.find_first_not_of(' '));
    if (name.rfind(prefix, 0) == 0) name.erase(0, prefix.size());
    names.push_back(name);
  }
  return names;
}

std::string WithoutSchema(std::string sql) {
  for (size_t at; (at = sql.find("warden.")) != std::string::npos;) sql.erase(at, 7);
  return sql;
}

TEST(RowColumnsTest, BackendsSelectTheJobColumnsTheDecoderReads) {
  const std::vector<std::string> sqlite_names = Names(sqlite::kJobColumns, "");
  EXPECT_EQ(static_cast<int>(sqlite_names.size()), kJobColumnCount);
  EXPECT_EQ(sqlite_names, Names(pg::kJobColumns, "j."));
  EXPECT_EQ(sqlite_names.front(), "id");
  EXPECT_EQ(sqlite_names.back(), "avoid_until");
}

TEST(RowColumnsTest, BackendsSelectTheSameWorkerColumns) {
  EXPECT_EQ(std::string(sqlite::kWorkerColumns), WithoutSchema(pg::kWorkerColumns));
  EXPECT_EQ(WithoutSchema(pg::JobExtraColumns("job")), sqlite::JobExtraColumns("job"));
}

}  // namespace
}  // namespace warden
