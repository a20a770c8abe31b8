// Issue 19 (3): no password is ever shown. RedactDbUrl and ScrubDbSecrets
// over every form a `--db` value may carry one in.
#include "store/postgres/pg_url.h"

#include <gtest/gtest.h>

namespace warden {
namespace {

TEST(RedactDbUrl, HidesThePasswordInTheUserInfoAndKeepsTheRest) {
  EXPECT_EQ(RedactDbUrl("postgresql://postgres:s3cret@db.internal:5432/app"),
            "postgresql://postgres:***@db.internal:5432/app");
  EXPECT_EQ(RedactDbUrl("postgres://u:s3cret@h/d?sslmode=require"),
            "postgres://u:***@h/d?sslmode=require");
  EXPECT_EQ(RedactDbUrl("postgresql://:s3cret@h/d"), "postgresql://:***@h/d");
  // Percent-encoded: hidden as written.
  EXPECT_EQ(RedactDbUrl("postgresql://u:s%40c%2Fr%3Fet@h/d"), "postgresql://u:***@h/d");
  // Raw '@', '/' or '?' in a password (malformed, libpq misreads them):
  // all of it is hidden still.
  EXPECT_EQ(RedactDbUrl("postgresql://u:p@ss@h/d"), "postgresql://u:***@h/d");
  EXPECT_EQ(RedactDbUrl("postgresql://u:pa/ss@h/d"), "postgresql://u:***@h/d");
  EXPECT_EQ(RedactDbUrl("postgresql://u:p?ss@h/d"), "postgresql://u:***@h/d");
}

TEST(RedactDbUrl, HidesPasswordsInTheQueryString) {
  EXPECT_EQ(RedactDbUrl("postgresql://u@h/d?password=s3cret"),
            "postgresql://u@h/d?password=***");
  EXPECT_EQ(RedactDbUrl("postgresql://h/d?sslmode=disable&password=s%20c&application_name=x"),
            "postgresql://h/d?sslmode=disable&password=***&application_name=x");
  EXPECT_EQ(RedactDbUrl("postgresql:///d?host=/tmp&sslpassword=k3y"),
            "postgresql:///d?host=/tmp&sslpassword=***");
  // A percent-encoded key is the same key to libpq.
  EXPECT_EQ(RedactDbUrl("postgresql://h/d?pass%77ord=s3cret"), "postgresql://h/d?pass%77ord=***");
  EXPECT_EQ(RedactDbUrl("postgresql://u:a@h/d?password=b"), "postgresql://u:***@h/d?password=***");
}

TEST(RedactDbUrl, HidesPasswordsInKeywordValueStrings) {
  EXPECT_EQ(RedactDbUrl("host=h password=s3cret dbname=d"), "host=h password=*** dbname=d");
  EXPECT_EQ(RedactDbUrl("host=h password = 'it\\'s secret' dbname=d"),
            "host=h password = '***' dbname=d");
  EXPECT_EQ(RedactDbUrl("password=s3cret"), "password=***");
}

TEST(RedactDbUrl, LeavesWhatHasNoPasswordAlone) {
  for (const char* url :
       {"jobs.db", "sqlite:/var/lib/warden/jobs.db?sync=normal", "./warden.db",
        "postgresql://postgres@127.0.0.1:5432/warden", "postgresql://h:5432/d",
        "postgresql://[::1]:5432/d", "postgres://", "", "host=h dbname=d user=u"}) {
    EXPECT_EQ(RedactDbUrl(url), url);
    EXPECT_TRUE(DbSecrets(url).empty()) << url;
  }
}

TEST(ScrubDbSecrets, RemovesThePasswordAsWrittenAndDecodedFromAnyText) {
  const std::string url = "postgresql://u:s3cr%25et@h/d?password=an%20other";
  // libpq quotes a token it cannot decode.
  EXPECT_EQ(ScrubDbSecrets("invalid percent-encoded token: \"s3cr%25et\"", url),
            "invalid percent-encoded token: \"***\"");
  EXPECT_EQ(ScrubDbSecrets("decoded s3cr%et and an other", url), "decoded *** and ***");
  EXPECT_EQ(ScrubDbSecrets("nothing secret here", url), "nothing secret here");
  EXPECT_EQ(ScrubDbSecrets("password=it's, it\\'s", "password='it\\'s'"), "password=***, ***");
}

TEST(RedactDbUrlsIn, RedactsEveryUrlAndPasswordPairInFreeText) {
  EXPECT_EQ(RedactDbUrlsIn("The following argument was not expected: postgresql://u:s3cret@h/d "
                           "(see warden --help)"),
            "The following argument was not expected: postgresql://u:***@h/d "
            "(see warden --help)");
  // A URL runs to the next space, quotes included (a quote may be part of
  // a password): the quote after a query's password is masked with it.
  EXPECT_EQ(RedactDbUrlsIn("unknown command 'postgres://u@h/d?password=s3cret' and "
                           "postgresql://:x@h"),
            "unknown command 'postgres://u@h/d?password=*** and postgresql://:***@h");
  EXPECT_EQ(RedactDbUrlsIn("quoted 'postgresql://u:it's-s3cret@h/d' here"),
            "quoted 'postgresql://u:***@h/d' here");
  EXPECT_EQ(RedactDbUrlsIn("no database at 'host=h password=s3cret dbname=d'"),
            "no database at 'host=h password=*** dbname=d'");
  EXPECT_EQ(RedactDbUrlsIn("postgres is fine; so is postgresql"),
            "postgres is fine; so is postgresql");
}

}  // namespace
}  // namespace warden
