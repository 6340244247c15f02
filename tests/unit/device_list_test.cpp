// Splitting a --device spec into the GPUs it names: lists, ranges, and specs with
// commas of their own (twin options) that stay whole.
#include <gtest/gtest.h>

#include "dvfslab/error.hpp"
#include "gpu/device_list.hpp"

namespace dvfslab {
namespace {

const std::vector<std::string> kPrefixes = {"sim:", "replay:", "twin:", ""};

std::vector<std::string> split(std::string_view spec) { return split_device_list(spec, kPrefixes); }

std::string message_of(std::string_view spec) {
  try {
    split(spec);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(DeviceList, OneSpecIsOneItem) {
  EXPECT_EQ(split("0"), (std::vector<std::string>{"0"}));
  EXPECT_EQ(split("auto"), (std::vector<std::string>{"auto"}));
  EXPECT_EQ(split("sim:h200x8"), (std::vector<std::string>{"sim:h200x8"}));
  EXPECT_EQ(split("0-3"), (std::vector<std::string>{"0-3"}));
}

TEST(DeviceList, CommasSeparateIndicesUuidsPciIdsAndPrefixedSpecs) {
  EXPECT_EQ(split("0,1,2,3"), (std::vector<std::string>{"0", "1", "2", "3"}));
  EXPECT_EQ(split("GPU-aa,gpu-bb,MIG-cc"), (std::vector<std::string>{"GPU-aa", "gpu-bb", "MIG-cc"}));
  EXPECT_EQ(split("0000:3b:00.0,3c:00.0"), (std::vector<std::string>{"0000:3b:00.0", "3c:00.0"}));
  EXPECT_EQ(split("sim:h200,sim:v100,0-1,all"),
            (std::vector<std::string>{"sim:h200", "sim:v100", "0-1", "all"}));
  EXPECT_EQ(split("8f6c1a2b-1234-5678-9abc-def012345678,0"),
            (std::vector<std::string>{"8f6c1a2b-1234-5678-9abc-def012345678", "0"}));
}

TEST(DeviceList, ATwinSpecKeepsTheCommasOfItsOptions) {
  EXPECT_EQ(split("twin:t.csv@noise=1%,seed=7"), (std::vector<std::string>{"twin:t.csv@noise=1%,seed=7"}));
  EXPECT_EQ(split("twin:t.csv@noise=1%,seed=7,twin:u.csv@seed=2,1"),
            (std::vector<std::string>{"twin:t.csv@noise=1%,seed=7", "twin:u.csv@seed=2", "1"}));
  // The twin's own parser refuses its empty option, with its own message.
  EXPECT_EQ(split("twin:t.csv@noise=1%,"), (std::vector<std::string>{"twin:t.csv@noise=1%,"}));
}

TEST(DeviceList, EmptyItemsAreRefused) {
  for (const char* spec : {",0", "0,,1", "0,", ","}) {
    const std::string message = message_of(spec);
    EXPECT_NE(message.find("an empty item"), std::string::npos) << spec << ": " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(DeviceList, RangesAreParsedAndReversedOnesRefused) {
  const auto range = parse_index_range("1-3");
  ASSERT_TRUE(range);
  EXPECT_EQ(range->first, 1U);
  EXPECT_EQ(range->last, 3U);
  EXPECT_TRUE(parse_index_range("2-2"));
  for (const char* other : {"3", "GPU-1-2", "-3", "1-", "1-2-3", "123456-123457"}) {
    EXPECT_FALSE(parse_index_range(other)) << other;
  }
  try {
    parse_index_range("3-0");
    FAIL() << "a reversed range was taken";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("(0-3)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dvfslab
