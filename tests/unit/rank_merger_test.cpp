// RankMerger: whose iterations count when several ranks of a job write markers.
#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "dvfslab/markers.hpp"

namespace dvfslab {
namespace {

Marker iterations(std::int64_t n, int rank, std::optional<double> items = std::nullopt) {
  Marker m;
  m.iterations = n;
  m.items = items;
  m.rank = rank;
  return m;
}

Marker window(Marker::Kind kind, int rank) {
  Marker m;
  m.kind = kind;
  m.name = "train";
  m.rank = rank;
  return m;
}

// The iterations counted after each input marker, from a fresh merger.
std::vector<std::int64_t> counted_after_each(IterationsFrom from, const std::vector<Marker>& input) {
  RankMerger merger(from);
  std::vector<std::int64_t> totals;
  std::int64_t total = 0;
  for (const Marker& marker : input) {
    std::vector<Marker> out;
    EXPECT_TRUE(merger.add(marker, out));
    for (const Marker& m : out) total += m.iterations;
    totals.push_back(total);
  }
  return totals;
}

TEST(RankMerger, Rank0CountsRankZeroAlone) {
  const std::vector<Marker> input{iterations(1, 0), iterations(1, 1), iterations(3, 1), iterations(2, 0)};
  EXPECT_EQ(counted_after_each(IterationsFrom::rank0, input), (std::vector<std::int64_t>{1, 1, 1, 3}));
}

TEST(RankMerger, SlowestFollowsTheRankBehindWhenRanksInterleave) {
  const std::vector<Marker> input{iterations(1, 0), iterations(1, 1), iterations(1, 0),
                                  iterations(1, 1), iterations(1, 1), iterations(1, 0)};
  // Rank 0 alone at first counts; then each iteration counts once both ranks finished it.
  EXPECT_EQ(counted_after_each(IterationsFrom::slowest, input),
            (std::vector<std::int64_t>{1, 1, 1, 2, 2, 3}));
}

TEST(RankMerger, SlowestWaitsForARankThatLags) {
  std::vector<Marker> input;
  for (int i = 0; i < 4; ++i) input.push_back(iterations(1, 0));
  input.push_back(iterations(1, 2));  // rank 2 joins at 1, rank 0 at 4
  input.push_back(iterations(1, 0));
  input.push_back(iterations(5, 2));  // rank 2 overtakes: rank 0's 5 count
  EXPECT_EQ(counted_after_each(IterationsFrom::slowest, input),
            (std::vector<std::int64_t>{1, 2, 3, 4, 4, 4, 5}));
}

TEST(RankMerger, SlowestNeverTakesBackWhatARankStartingLateHasNotDone) {
  RankMerger merger(IterationsFrom::slowest);
  std::vector<Marker> out;
  merger.add(iterations(10, 0, 80.0), out);
  merger.add(iterations(2, 1, 16.0), out);  // starts late: below what was counted
  merger.add(iterations(9, 1, 72.0), out);  // rank 1 at 11, rank 0 at 10: nothing new
  merger.add(iterations(3, 0, 24.0), out);  // rank 0 at 13, rank 1 at 11: one more
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].iterations, 10);
  EXPECT_EQ(out[0].items, 80.0);
  EXPECT_EQ(out[1].iterations, 1);
  EXPECT_EQ(out[1].items, 8.0);
  EXPECT_EQ(merger.ranks_seen(), 2u);
}

TEST(RankMerger, SlowestStopsAtARankSeenOnce) {
  const std::vector<Marker> input{iterations(1, 0), iterations(1, 3), iterations(1, 0), iterations(1, 0),
                                  iterations(1, 0)};
  EXPECT_EQ(counted_after_each(IterationsFrom::slowest, input), (std::vector<std::int64_t>{1, 1, 1, 1, 1}));
}

Marker announced(Marker marker, int ranks) {
  marker.ranks = ranks;
  return marker;
}

TEST(RankMerger, SlowestCountsNothingUntilEveryAnnouncedRankHasWritten) {
  // Two independent ranks that start apart (as on a real node): rank 0 runs ahead
  // while rank 1 is still loading; the job's count is what rank 1 has done.
  std::vector<Marker> input;
  for (int i = 0; i < 5; ++i) input.push_back(announced(iterations(1, 0), 2));
  input.push_back(announced(iterations(2, 1), 2));
  input.push_back(announced(iterations(1, 0), 2));
  input.push_back(announced(iterations(4, 1), 2));
  EXPECT_EQ(counted_after_each(IterationsFrom::slowest, input),
            (std::vector<std::int64_t>{0, 0, 0, 0, 0, 2, 2, 6}));
}

TEST(RankMerger, TheLargestAnnouncedCountHolds) {
  RankMerger merger(IterationsFrom::slowest);
  std::vector<Marker> out;
  merger.add(announced(iterations(3, 0), 3), out);
  merger.add(announced(iterations(3, 1), 2), out);  // a smaller claim does not lower it
  EXPECT_TRUE(out.empty()) << "rank 2 of 3 has not written";
  EXPECT_EQ(merger.ranks_announced(), 3);
  merger.add(iterations(1, 2), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].iterations, 1);
}

TEST(RankMerger, Rank0IgnoresTheAnnouncedCount) {
  const std::vector<Marker> input{announced(iterations(2, 0), 4), announced(iterations(1, 0), 4)};
  EXPECT_EQ(counted_after_each(IterationsFrom::rank0, input), (std::vector<std::int64_t>{2, 3}));
}

TEST(RankMerger, NamedWindowsAreRankZerosInEitherMode) {
  for (const auto from : {IterationsFrom::rank0, IterationsFrom::slowest}) {
    RankMerger merger(from);
    std::vector<Marker> out;
    merger.add(window(Marker::Kind::begin, 1), out);
    merger.add(window(Marker::Kind::begin, 0), out);
    merger.add(window(Marker::Kind::end, 1), out);
    merger.add(window(Marker::Kind::end, 0), out);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0], window(Marker::Kind::begin, 0));
    EXPECT_EQ(out[1], window(Marker::Kind::end, 0));
  }
}

TEST(RankMerger, SlowestPassesRankZerosLoopStart) {
  RankMerger merger(IterationsFrom::slowest);
  std::vector<Marker> out;
  merger.add(iterations(0, 1), out);
  EXPECT_TRUE(out.empty());
  merger.add(iterations(0, 0), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].iterations, 0);
}

TEST(RankMerger, SlowestRefusesARankTotalPastTheLargestCount) {
  RankMerger merger(IterationsFrom::slowest);
  std::vector<Marker> out;
  EXPECT_TRUE(merger.add(iterations(5, 0), out));
  EXPECT_TRUE(merger.add(iterations(std::numeric_limits<std::int64_t>::max(), 1), out));
  EXPECT_FALSE(merger.add(iterations(1, 1), out));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].iterations, 5);
}

}  // namespace
}  // namespace dvfslab
