// The chaos checker's overlap counting (overlap.h): that it can fail, and
// that it fails only where it should.
#include "overlap.h"

#include <gtest/gtest.h>

namespace chaos {
namespace {

using Tags = std::vector<size_t>;

Span Live(const std::string& key, int64_t from, int64_t to, size_t tag) {
  return Span{key, from, to, false, tag, {}};
}
Span Stale(const std::string& key, int64_t from, int64_t to, size_t tag) {
  return Span{key, from, to, true, tag, {}};
}

TEST(OverlapTest, AtTheLimitIsNoViolationAndIsMeasured) {
  // Three at once from 20 to 30, with a limit of 3: reached, not passed.
  const auto load = CountOverlaps(
      {Live("q", 0, 30, 1), Live("q", 10, 40, 2), Live("q", 20, 50, 3)}, {{"q", 3}});
  const KeyLoad& q = load.at("q");
  EXPECT_EQ(q.spans, 3);
  EXPECT_EQ(q.peak_live, 3);
  EXPECT_EQ(q.peak, 3);
  EXPECT_EQ(q.at_limit_ms, 10);
  EXPECT_TRUE(q.over.empty());
  EXPECT_TRUE(q.stale_over.empty());
}

TEST(OverlapTest, OneMoreThanTheLimitIsAViolationWithItsSpans) {
  const auto load = CountOverlaps({Live("q", 0, 100, 1), Live("q", 10, 60, 2),
                                   Live("q", 20, 30, 3), Live("q", 40, 45, 4)},
                                  {{"q", 2}});
  const KeyLoad& q = load.at("q");
  EXPECT_EQ(q.peak_live, 3);
  ASSERT_EQ(q.over.size(), 2u);  // [20, 30) and [40, 45): two periods
  EXPECT_EQ(q.over[0].from, 20);
  EXPECT_EQ(q.over[0].to, 30);
  EXPECT_EQ(q.over[0].peak_live, 3);
  EXPECT_EQ(q.over[0].peak_at, 20);
  EXPECT_EQ(q.over[0].at_peak, (Tags{1, 2, 3}));
  EXPECT_EQ(q.over[1].from, 40);
  EXPECT_EQ(q.over[1].to, 45);
  EXPECT_EQ(q.over[1].at_peak, (Tags{1, 2, 4}));
}

TEST(OverlapTest, ACrowdThatGrowsIsOnePeriodWithItsPeak) {
  const auto load = CountOverlaps(
      {Live("q", 0, 100, 1), Live("q", 10, 100, 2), Live("q", 20, 100, 3)}, {{"q", 1}});
  const KeyLoad& q = load.at("q");
  ASSERT_EQ(q.over.size(), 1u);
  EXPECT_EQ(q.over[0].from, 10);
  EXPECT_EQ(q.over[0].to, 100);
  EXPECT_EQ(q.over[0].peak_live, 3);
  EXPECT_EQ(q.over[0].peak_at, 20);
}

TEST(OverlapTest, TouchingSpansDoNotMeet) {
  // One ends at 10 as the next begins: never two at once. Nor do spans
  // that hold no time.
  const auto load = CountOverlaps(
      {Live("q", 0, 10, 1), Live("q", 10, 20, 2), Live("q", 5, 5, 3), Live("q", 15, 12, 4)},
      {{"q", 1}});
  const KeyLoad& q = load.at("q");
  EXPECT_EQ(q.spans, 2);
  EXPECT_EQ(q.peak, 1);
  EXPECT_TRUE(q.over.empty());
  EXPECT_EQ(q.at_limit_ms, 20);
}

TEST(OverlapTest, StaleSpansAreCountedApartNeverHidden) {
  // Two live and one stale (a run the store had taken back): over a limit
  // of 2 only with the stale one, so a stale overlap, not a violation...
  auto load = CountOverlaps(
      {Live("q", 0, 50, 1), Live("q", 10, 50, 2), Stale("q", 20, 30, 3)}, {{"q", 2}});
  EXPECT_TRUE(load.at("q").over.empty());
  ASSERT_EQ(load.at("q").stale_over.size(), 1u);
  const Crowd& c = load.at("q").stale_over[0];
  EXPECT_EQ(c.from, 20);
  EXPECT_EQ(c.to, 30);
  EXPECT_EQ(c.peak, 3);
  EXPECT_EQ(c.peak_live, 2);
  EXPECT_EQ(c.at_peak, (Tags{1, 2, 3}));
  EXPECT_EQ(load.at("q").peak, 3);
  EXPECT_EQ(load.at("q").peak_live, 2);
  // ...but three live ones with it are a violation all the same.
  load = CountOverlaps({Live("q", 0, 50, 1), Live("q", 10, 50, 2), Live("q", 15, 50, 4),
                        Stale("q", 20, 30, 3)},
                       {{"q", 2}});
  ASSERT_EQ(load.at("q").over.size(), 1u);
  EXPECT_EQ(load.at("q").over[0].from, 15);
  EXPECT_EQ(load.at("q").over[0].peak, 4);
  EXPECT_EQ(load.at("q").over[0].peak_live, 3);
  EXPECT_TRUE(load.at("q").stale_over.empty());
}

TEST(OverlapTest, EachKeyHasItsOwnLimit) {
  // The same spans by node, as a capacity check would count them: node a
  // may run 2, node b 1; a key without a limit is not counted.
  const auto load = CountOverlaps({Live("a", 0, 10, 1), Live("a", 5, 15, 2),
                                   Live("b", 0, 10, 3), Live("b", 5, 15, 4),
                                   Live("c", 0, 10, 5), Live("c", 0, 10, 6)},
                                  {{"a", 2}, {"b", 1}, {"idle", 4}});
  EXPECT_TRUE(load.at("a").over.empty());
  ASSERT_EQ(load.at("b").over.size(), 1u);
  EXPECT_EQ(load.at("b").over[0].at_peak, (Tags{3, 4}));
  EXPECT_EQ(load.count("c"), 0u);
  EXPECT_EQ(load.at("idle").spans, 0);
  EXPECT_EQ(load.at("idle").peak, 0);
}

// A node resized while its jobs run (invariant 8): a lowered limit stops
// nothing, but admits nothing while as many run; a raised one admits more
// at once; where the change's moment is unknown, the larger holds.
Span Admitted(const std::string& key, int64_t from, int64_t to, size_t tag, int64_t claimed) {
  Span s = Live(key, from, to, tag);
  s.judged_at = claimed;
  return s;
}

TEST(OverlapTest, ALoweredLimitStopsNothingButAdmitsNothingOverIt) {
  Limit lowered(3);
  lowered.changes.push_back({50, 50, 1});
  EXPECT_EQ(lowered.At(49), 3);
  EXPECT_EQ(lowered.At(50), 3) << "within the change: the larger";
  EXPECT_EQ(lowered.At(51), 1);
  // Three from before it run on past it: over the new limit, not a fault.
  auto load = CountOverlaps({Live("n", 0, 100, 1), Live("n", 10, 100, 2), Live("n", 20, 100, 3),
                             Live("n", 120, 130, 4)},
                            {{"n", lowered}});
  EXPECT_TRUE(load.at("n").over.empty());
  // One more admitted while two of them still run: a violation, judged by
  // the lowered limit, until the count is back within it.
  load = CountOverlaps({Live("n", 0, 100, 1), Live("n", 10, 70, 2), Live("n", 20, 80, 3),
                        Live("n", 75, 90, 4)},
                       {{"n", lowered}});
  ASSERT_EQ(load.at("n").over.size(), 1u);
  EXPECT_EQ(load.at("n").over[0].from, 75);
  EXPECT_EQ(load.at("n").over[0].to, 90) << "back to 1 when the late one ends";
  EXPECT_EQ(load.at("n").over[0].limit, 1);
  EXPECT_EQ(load.at("n").over[0].at_peak, (Tags{1, 3, 4}));
}

TEST(OverlapTest, ASpanIsJudgedByTheLimitWhenItWasAdmitted) {
  Limit lowered(3);
  lowered.changes.push_back({50, 70, 1});  // sent at 50, answered at 70
  // Claimed within the change's window, or before it, and started after
  // it: admitted under 3.
  auto load = CountOverlaps({Live("n", 0, 100, 1), Live("n", 0, 100, 2),
                             Admitted("n", 60, 100, 3, 60), Admitted("n", 90, 95, 4, 40)},
                            {{"n", lowered}});
  EXPECT_EQ(load.at("n").over.size(), 1u) << "4 live at 90 is over 3 all the same";
  load = CountOverlaps({Live("n", 0, 100, 1), Live("n", 0, 100, 2),
                        Admitted("n", 80, 100, 3, 60)},
                       {{"n", lowered}});
  EXPECT_TRUE(load.at("n").over.empty());
  // Claimed after the change's answer: admitted under 1.
  load = CountOverlaps({Live("n", 0, 100, 1), Admitted("n", 80, 100, 3, 71)},
                       {{"n", lowered}});
  ASSERT_EQ(load.at("n").over.size(), 1u);
  EXPECT_EQ(load.at("n").over[0].limit, 1);
}

// One violation, over [from, to), opened under `limit`.
void ExpectOneViolation(const KeyLoad& load, int64_t from, int64_t to, int64_t limit) {
  ASSERT_EQ(load.over.size(), 1u);
  EXPECT_EQ(load.over[0].from, from);
  EXPECT_EQ(load.over[0].to, to);
  EXPECT_EQ(load.over[0].limit, limit);
}

TEST(OverlapTest, ASpanAdmittedBeforeARaiseThatStartsLateIsJudgedWithTheLaterOnes) {
  // The chaos seed 0x04af0fe596920ad9 (issue 35): capacity 8, raised to 12
  // (sent at 76, answered at 77). Four claimed under 8 at 70 whose runs
  // start late (claim-ahead), six claimed under 12 at 78 that start first:
  // ten at once, within the 12 that admitted the last of them. Judged by
  // each run's own claim, the late starters were held to 8.
  Limit raised(8);
  raised.changes.push_back({76, 77, 12});
  std::vector<Span> spans;
  size_t tag = 0;
  for (int i = 0; i < 4; ++i) spans.push_back(Admitted("n", 84 + i, 200, ++tag, 70));
  for (int i = 0; i < 6; ++i) spans.push_back(Admitted("n", 79 + i, 200, ++tag, 78));
  auto load = CountOverlaps(spans, {{"n", raised}});
  EXPECT_EQ(load.at("n").peak_live, 10);
  EXPECT_TRUE(load.at("n").over.empty());
  // Three more admitted at 90, under 12 as well: 13 is over it.
  for (int i = 0; i < 3; ++i) spans.push_back(Admitted("n", 95, 100, ++tag, 90));
  load = CountOverlaps(spans, {{"n", raised}});
  ExpectOneViolation(load.at("n"), 95, 100, 12);
  EXPECT_EQ(load.at("n").over.at(0).peak_live, 13);
}

TEST(OverlapTest, ALaterAdmissionUnderALoweredLimitHoldsTheEarlierOnesToIt) {
  // Lowered from 4 to 2 at 50: two claimed at 10 run on; a third claimed
  // at 60, under 2, makes three at once: a violation from its start until
  // one of the first two ends at 80.
  Limit lowered(4);
  lowered.changes.push_back({50, 50, 2});
  const auto load = CountOverlaps({Admitted("n", 20, 100, 1, 10), Admitted("n", 20, 80, 2, 10),
                                   Admitted("n", 70, 90, 3, 60)},
                                  {{"n", lowered}});
  ExpectOneViolation(load.at("n"), 70, 80, 2);
}

TEST(OverlapTest, ARaisedLimitAdmitsMoreAndIsMeasuredAgainst) {
  Limit raised(1);
  raised.changes.push_back({10, 10, 3});
  const auto load = CountOverlaps(
      {Live("n", 0, 100, 1), Live("n", 20, 100, 2), Live("n", 30, 100, 3)}, {{"n", raised}});
  EXPECT_TRUE(load.at("n").over.empty());
  EXPECT_EQ(load.at("n").at_limit_ms, 10 + 70) << "at 1 from 0 to 10, at 3 from 30 to 100";
}

}  // namespace
}  // namespace chaos
