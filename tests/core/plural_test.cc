#include "warden/plural.h"

#include <gtest/gtest.h>

namespace warden {
namespace {

TEST(Plural, OneIsSingularEveryOtherCountIsPlural) {
  EXPECT_EQ(Plural(1, "job"), "1 job");
  EXPECT_EQ(Plural(0, "job"), "0 jobs");
  EXPECT_EQ(Plural(2, "job"), "2 jobs");
  EXPECT_EQ(Plural(-1, "job"), "-1 job");
  EXPECT_EQ(Plural(1, "crash loop"), "1 crash loop");
  EXPECT_EQ(Plural(11, "crash loop"), "11 crash loops");
  EXPECT_EQ(Plural(1, "process", "processes"), "1 process");
  EXPECT_EQ(Plural(3, "process", "processes"), "3 processes");
}

}  // namespace
}  // namespace warden
