// The marker parser: the grammar, and robustness against arbitrary input (random
// bytes, malformed and huge lines, any split into reads) with fixed seeds.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "dvfslab/markers.hpp"

namespace dvfslab {
namespace {

Marker iterations(std::int64_t n, std::optional<double> items = std::nullopt) {
  Marker m;
  m.kind = Marker::Kind::iterations;
  m.iterations = n;
  m.items = items;
  return m;
}

Marker window(Marker::Kind kind, std::string name) {
  Marker m;
  m.kind = kind;
  m.name = std::move(name);
  return m;
}

TEST(MarkerLine, AcceptsTheProtocol) {
  EXPECT_EQ(parse_marker_line("dvfslab:iter 1"), iterations(1));
  EXPECT_EQ(parse_marker_line("dvfslab:iter 12 items 3072"), iterations(12, 3072.0));
  EXPECT_EQ(parse_marker_line("  dvfslab:iter\t2   items 0.5 \r"), iterations(2, 0.5));
  EXPECT_EQ(parse_marker_line("dvfslab:begin train/epoch-1"), window(Marker::Kind::begin, "train/epoch-1"));
  EXPECT_EQ(parse_marker_line("dvfslab:end steady"), window(Marker::Kind::end, "steady"));
  Marker step = iterations(57, 912.0);
  step.kind = Marker::Kind::step;
  EXPECT_EQ(parse_marker_line("dvfslab:step 57 items 912"), step);
}

TEST(MarkerLine, RejectsEverythingElse) {
  for (const char* line : {"",
                           "dvfslab:iter",
                           "dvfslab:iter 0",
                           "dvfslab:iter -3",
                           "dvfslab:iter 1.5",
                           "dvfslab:iter 2x",
                           "dvfslab:iter 1 items",
                           "dvfslab:iter 1 items -1",
                           "dvfslab:iter 1 items nan",
                           "dvfslab:iter 1 items inf",
                           "dvfslab:iter 1 images 3",
                           "dvfslab:iter 1 items 3 extra",
                           "dvfslab:iter 99999999999999999999",
                           "dvfslab:begin",
                           "dvfslab:begin a b",
                           "dvfslab:begin na\"me",
                           "dvfslab:end x;y",
                           "DVFSLAB:ITER 1",
                           "dvfslab:iterate 1",
                           "hello world",
                           "dvfslab:begin\x01"}) {
    EXPECT_FALSE(parse_marker_line(line)) << line;
  }
  EXPECT_FALSE(parse_marker_line("dvfslab:begin " + std::string(max_marker_name_bytes + 1, 'a')));
  EXPECT_TRUE(parse_marker_line("dvfslab:begin " + std::string(max_marker_name_bytes, 'a')));
}

TEST(MarkerParser, CountsMalformedLinesAndSkipsBlankOnes) {
  MarkerParser parser;
  std::vector<Marker> out;
  parser.feed("dvfslab:iter 1\n\ngarbage\n   \ndvfslab:begin a\ndvfslab:end a", out);
  EXPECT_EQ(out.size(), 2u);
  parser.finish(out);  // the last line had no newline
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[2], window(Marker::Kind::end, "a"));
  EXPECT_EQ(parser.lines(), 4u);
  EXPECT_EQ(parser.malformed(), 1u);
}

TEST(MarkerParser, HugeLineIsDroppedAndTheNextLineStillParses) {
  MarkerParser parser;
  std::vector<Marker> out;
  const std::string chunk(1 << 16, 'x');
  parser.feed("dvfslab:iter 1 items ", out);
  for (int i = 0; i < 256; ++i) parser.feed(chunk, out);  // 16 MiB without a newline
  parser.feed("7\ndvfslab:iter 2\n", out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], iterations(2));
  EXPECT_EQ(parser.malformed(), 1u);
  EXPECT_EQ(parser.lines(), 2u);
}

TEST(MarkerParser, LineOfExactlyTheLimitIsKept) {
  MarkerParser parser;
  std::vector<Marker> out;
  std::string line = "dvfslab:iter 5";
  line += std::string(max_marker_line_bytes - line.size(), ' ');
  parser.feed(line + "\n", out);
  ASSERT_EQ(out.size(), 1u);
  parser.feed(line + " \n", out);
  EXPECT_EQ(out.size(), 1u);
  EXPECT_EQ(parser.malformed(), 1u);
}

// Builds a stream of known valid and malformed lines, then feeds it in random
// pieces: the parser must find exactly the valid markers and count the rest.
TEST(MarkerParser, StepLinesBecomeTheIterationsSinceTheLastStep) {
  MarkerParser parser;
  std::vector<Marker> out;
  // Step 3's line is lost: step 4 still carries the total.
  parser.feed("dvfslab:step 0\ndvfslab:step 1 items 8\ndvfslab:step 2 items 16\ndvfslab:step 4 items 32\n",
              out);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0], iterations(0));  // where the loop starts
  EXPECT_EQ(out[1], iterations(1, 8.0));
  EXPECT_EQ(out[2], iterations(1, 8.0));
  EXPECT_EQ(out[3], iterations(2, 16.0));
  EXPECT_EQ(parser.rejected(), 0u);
  parser.feed("dvfslab:step 4 items 32\ndvfslab:step 3\ndvfslab:step 5\n", out);  // a repeat, a step back
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[4], iterations(1));
  EXPECT_EQ(parser.rejected(), 1u);
  EXPECT_FALSE(parse_marker_line("dvfslab:step -1"));
  EXPECT_FALSE(parse_marker_line("dvfslab:step 1 items"));
}

// `step 0` after set-up marks where the loop starts (it opens measure's steady
// window); a second `step 0` repeats it and is dropped.
TEST(MarkerParser, H5_AFirstStepZeroComesOutAsTheStartOfTheLoop) {
  MarkerParser parser;
  std::vector<Marker> out;
  parser.feed("dvfslab:step 0\ndvfslab:step 0\ndvfslab:step 0 items 4\n", out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], iterations(0));
  EXPECT_EQ(parser.rejected(), 1u);  // items cannot grow in no iterations
}

TEST(MarkerParser, IterValuesRisingByOneLookLikeAStepIndex) {
  const auto looks_like_steps = [](const std::string& stream) {
    MarkerParser parser;
    std::vector<Marker> out;
    parser.feed(stream, out);
    return parser.iter_values_look_like_steps();
  };
  EXPECT_TRUE(
      looks_like_steps("dvfslab:iter 57\ndvfslab:iter 58\ndvfslab:iter 59\ndvfslab:iter 60\n"
                       "dvfslab:iter 61\n"));
  EXPECT_FALSE(
      looks_like_steps("dvfslab:iter 1\ndvfslab:iter 1\ndvfslab:iter 1\ndvfslab:iter 1\n"
                       "dvfslab:iter 1\ndvfslab:iter 1\n"));
  EXPECT_FALSE(looks_like_steps("dvfslab:iter 1\ndvfslab:iter 2\ndvfslab:iter 3\ndvfslab:iter 4\n"))
      << "four lines are not yet several";
  EXPECT_FALSE(
      looks_like_steps("dvfslab:iter 8\ndvfslab:iter 9\ndvfslab:iter 8\ndvfslab:iter 9\n"
                       "dvfslab:iter 8\ndvfslab:iter 9\n"));
}

Marker of_rank(Marker marker, int rank) {
  marker.rank = rank;
  return marker;
}

TEST(MarkerLine, AnyLineMayEndWithItsRank) {
  EXPECT_EQ(parse_marker_line("dvfslab:iter 1 items 32 rank 3"), of_rank(iterations(1, 32.0), 3));
  EXPECT_EQ(parse_marker_line("dvfslab:iter 2 rank 0"), iterations(2));
  EXPECT_EQ(parse_marker_line("dvfslab:begin train rank 7"),
            of_rank(window(Marker::Kind::begin, "train"), 7));
  EXPECT_EQ(parse_marker_line("dvfslab:end train rank 7"), of_rank(window(Marker::Kind::end, "train"), 7));
  EXPECT_EQ(parse_marker_line("dvfslab:begin rank"), window(Marker::Kind::begin, "rank"));
  Marker step = of_rank(iterations(4), max_marker_rank);
  step.kind = Marker::Kind::step;
  EXPECT_EQ(parse_marker_line("dvfslab:step 4 rank " + std::to_string(max_marker_rank)), step);
  for (const std::string& line : std::vector<std::string>{
           "dvfslab:iter 1 rank", "dvfslab:iter 1 rank -1", "dvfslab:iter 1 rank 1.5",
           "dvfslab:iter 1 rank x", "dvfslab:iter 1 rank " + std::to_string(max_marker_rank + 1),
           "dvfslab:iter 1 rank 2 items 3", "dvfslab:iter 1 items 3 rank 2 rank 2", "dvfslab:begin rank 2",
           "dvfslab:end a rank 99999999999999999999"}) {
    EXPECT_FALSE(parse_marker_line(line)) << line;
  }
}

TEST(MarkerLine, ARankMaySayHowManyRanksTheJobHas) {
  Marker marker = of_rank(iterations(1, 32.0), 3);
  marker.ranks = 4;
  EXPECT_EQ(parse_marker_line("dvfslab:iter 1 items 32 rank 3 of 4"), marker);
  Marker begin = of_rank(window(Marker::Kind::begin, "of"), 0);
  begin.ranks = 1;
  EXPECT_EQ(parse_marker_line("dvfslab:begin of rank 0 of 1"), begin);
  EXPECT_EQ(parse_marker_line("dvfslab:iter 1 rank 0 of " + std::to_string(max_marker_rank + 1))->ranks,
            max_marker_rank + 1);
  for (const std::string& line : std::vector<std::string>{
           "dvfslab:iter 1 rank 3 of 3", "dvfslab:iter 1 rank 3 of 0", "dvfslab:iter 1 rank 0 of -1",
           "dvfslab:iter 1 rank 0 of x", "dvfslab:iter 1 rank 0 of", "dvfslab:iter 1 rank 0 of 2 of 3",
           "dvfslab:iter 1 rank 0 of " + std::to_string(max_marker_rank + 2), "dvfslab:iter 1 of 2",
           "dvfslab:iter 1 items 3 of 2 rank 1"}) {
    EXPECT_FALSE(parse_marker_line(line)) << line;
  }
}

TEST(MarkerParser, EachRankHasItsOwnStepCounter) {
  MarkerParser parser(IterationsFrom::slowest);
  std::vector<Marker> out;
  parser.feed(
      "dvfslab:step 0\ndvfslab:step 0 rank 1\ndvfslab:step 2 items 8\ndvfslab:step 3 items 12 rank 1\n", out);
  EXPECT_EQ(parser.rejected(), 0u);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], iterations(0));       // rank 0's loop starts
  EXPECT_EQ(out[1], iterations(2, 8.0));  // rank 1 passed rank 0's 2 steps
  parser.feed("dvfslab:step 1 rank 1\n", out);
  EXPECT_EQ(parser.rejected(), 1u) << "rank 1's counter went back";
}

TEST(MarkerParser, ByDefaultOnlyRankZeroCounts) {
  MarkerParser parser;
  std::vector<Marker> out;
  parser.feed("dvfslab:iter 1 rank 1\ndvfslab:begin a rank 1\ndvfslab:iter 2 items 4\ndvfslab:end a rank 1\n",
              out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], iterations(2, 4.0));
  EXPECT_EQ(parser.lines(), 4u);
  EXPECT_EQ(parser.malformed() + parser.rejected(), 0u);
}

TEST(MarkerParserFuzz, RandomStreamsSplitAnywhere) {
  for (std::uint32_t seed = 1; seed <= 40; ++seed) {
    std::mt19937 random(seed);
    std::string stream;
    std::vector<Marker> expected;
    std::size_t expected_malformed = 0;
    for (int line = 0; line < 300; ++line) {
      switch (random() % 6) {
        case 0: {
          const std::int64_t n = 1 + random() % 1000;
          stream += "dvfslab:iter " + std::to_string(n) + "\n";
          expected.push_back(iterations(n));
          break;
        }
        case 1: {
          const std::int64_t n = 1 + random() % 10;
          const double items = static_cast<double>(random() % 100000) / 4.0;
          stream += "dvfslab:iter " + std::to_string(n) + " items " + std::to_string(items) + "\n";
          expected.push_back(iterations(n, items));
          break;
        }
        case 2: {
          // Appended rather than "w" + ...: GCC 12 warns falsely (-Wrestrict) at -O3.
          std::string name = "w";
          name += std::to_string(random() % 50);
          const bool begin = random() % 2 == 0;
          stream += std::string(begin ? "dvfslab:begin " : "dvfslab:end ") + name + "\n";
          expected.push_back(window(begin ? Marker::Kind::begin : Marker::Kind::end, name));
          break;
        }
        case 3: {
          // Random bytes without a newline, prefixed so they never form a marker.
          std::string junk = "#";
          const std::size_t length = random() % 200;
          for (std::size_t i = 0; i < length; ++i) {
            char c = static_cast<char>(random() % 256);
            junk += c == '\n' ? '?' : c;
          }
          stream += junk + "\n";
          ++expected_malformed;
          break;
        }
        case 4: {
          stream += std::string(max_marker_line_bytes + 1 + random() % 20000, 'z') + "\n";
          ++expected_malformed;
          break;
        }
        default: {
          // A marker cut short, as from a program killed mid-write.
          stream += std::string("dvfslab:iter 3 items 12").substr(0, 16 + random() % 6) + "\n";
          ++expected_malformed;
          break;
        }
      }
    }
    MarkerParser parser;
    std::vector<Marker> found;
    std::size_t position = 0;
    while (position < stream.size()) {
      const std::size_t piece = 1 + random() % 9000;
      parser.feed(std::string_view(stream).substr(position, piece), found);
      position += piece;
    }
    parser.finish(found);
    ASSERT_EQ(found.size(), expected.size()) << "seed " << seed;
    for (std::size_t i = 0; i < found.size(); ++i) {
      ASSERT_EQ(found[i].kind, expected[i].kind) << "seed " << seed << " marker " << i;
      ASSERT_EQ(found[i].iterations, expected[i].iterations) << "seed " << seed << " marker " << i;
      ASSERT_EQ(found[i].name, expected[i].name) << "seed " << seed << " marker " << i;
      ASSERT_EQ(found[i].items.has_value(), expected[i].items.has_value()) << "seed " << seed;
      if (found[i].items) {
        ASSERT_NEAR(*found[i].items, *expected[i].items, 1e-6) << "seed " << seed;
      }
    }
    EXPECT_EQ(parser.malformed(), expected_malformed) << "seed " << seed;
  }
}

TEST(MarkerParserFuzz, PureRandomBytesNeverCrashOrGrow) {
  for (std::uint32_t seed = 100; seed < 120; ++seed) {
    std::mt19937 random(seed);
    MarkerParser parser;
    std::vector<Marker> found;
    std::string bytes(1 << 16, '\0');
    for (int round = 0; round < 16; ++round) {
      for (auto& b : bytes) b = static_cast<char>(random() % 256);
      parser.feed(bytes, found);
    }
    parser.finish(found);
    EXPECT_GT(parser.lines(), 0u) << "seed " << seed;
    EXPECT_LE(found.size(), parser.lines()) << "seed " << seed;
    EXPECT_EQ(found.size() + parser.malformed(), parser.lines()) << "seed " << seed;
  }
}

}  // namespace
}  // namespace dvfslab
