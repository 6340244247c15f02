// The prolog's record of what it applied to a GPU: written and read back, removed,
// and a file that is not a record skipped with one warning.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "dvfslab/applied_record.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

using testing::ScratchDir;

AppliedSettingRecord h200_record() {
  return {"42",  "alice", "GPU-4e7dfbda-0000", "resnet50-train-bf16-b128", Setting{1200, 2201, 400},
          0.158, 0.05};
}

TEST(AppliedRecord, WhatIsWrittenReadsBackByGpuAndIsGoneOnceRemoved) {
  ScratchDir dir;
  const AppliedSettingRecord record = h200_record();
  AppliedSettingRecord without_expectation{
      "43", "", "GPU-1111", "default", Setting{1005, std::nullopt, 200}, std::nullopt, std::nullopt};
  write_applied_record(dir.path(), record);
  write_applied_record(dir.path(), without_expectation);
  std::ostringstream warnings;
  AppliedRecordReader reader(warnings);
  const auto records = reader.read(dir.path());
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records.at("GPU-4e7dfbda-0000"), record);
  EXPECT_EQ(records.at("GPU-1111"), without_expectation);
  EXPECT_TRUE(std::filesystem::exists(dir / "applied-GPU-4e7dfbda-0000.json"));

  remove_applied_record(dir.path(), record.gpu_uuid);
  remove_applied_record(dir.path(), "GPU-never-written");
  EXPECT_EQ(reader.read(dir.path()).count(record.gpu_uuid), 0u);
  EXPECT_EQ(warnings.str(), "");
  EXPECT_TRUE(reader.read(dir / "absent").empty());
}

TEST(AppliedRecord, AFileThatIsNotARecordIsIgnoredWithOneWarning) {
  ScratchDir dir;
  write_applied_record(dir.path(), h200_record());
  std::ofstream(dir / "applied-GPU-broken.json") << "{\"format\": \"dvfslab-applied-setting\", \"version\"";
  std::ofstream(dir / "applied-GPU-other.json") << R"({"format": "something-else", "version": 1})";
  std::ofstream(dir / "journal-GPU-4e7dfbda-0000.json") << "a journal is not read as a record";
  std::ostringstream warnings;
  AppliedRecordReader reader(warnings);
  for (int pass = 0; pass < 3; ++pass) {
    const auto records = reader.read(dir.path());
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records.begin()->second, h200_record());
  }
  const std::string text = warnings.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
  EXPECT_NE(text.find("applied-GPU-broken.json"), std::string::npos);
  EXPECT_NE(text.find("applied-GPU-other.json"), std::string::npos);
}

TEST(AppliedRecord, ARecordNamingAnotherGpuThanItsFileIsIgnored) {
  ScratchDir dir;
  write_applied_record(dir.path(), h200_record());
  std::filesystem::rename(dir / "applied-GPU-4e7dfbda-0000.json", dir / "applied-GPU-2222.json");
  std::ostringstream warnings;
  AppliedRecordReader reader(warnings);
  EXPECT_TRUE(reader.read(dir.path()).empty());
  EXPECT_NE(warnings.str().find("applied-GPU-2222.json"), std::string::npos);
}

}  // namespace
}  // namespace dvfslab
