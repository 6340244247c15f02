// register_gpu_backend refuses a row that would make a --device spec ambiguous or
// leave a user without help, and leaves the table as it was. (A row that is
// accepted stays for the process, so acceptance is shown by
// examples/host_backend, in a process of its own.)
#include <gtest/gtest.h>

#include <string>

#include "dvfslab/error.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/gpu_backends.hpp"

namespace dvfslab {
namespace {

GpuBackendDefinition valid_row() {
  return {.name = "bench",
          .prefix = "bench:",
          .open = [](std::string_view, const OpenOptions&) { return std::vector<std::unique_ptr<Gpu>>{}; },
          .find_all = {},
          .spec_summary = "bench:NAME",
          .spec_help = [] { return std::string("bench:NAME for a bench GPU"); },
          .library_keyword = "",
          .library_variable = ""};
}

std::string refusal(GpuBackendDefinition row) {
  try {
    register_gpu_backend(std::move(row));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(GpuBackendRegistration, ARowThatWouldMakeASpecAmbiguousOrUnexplainedIsRefusedWithTheReason) {
  const std::string help_before = device_spec_help();

  GpuBackendDefinition row = valid_row();
  row.name = "sim";
  EXPECT_NE(refusal(row).find("the name 'sim' is registered already"), std::string::npos) << refusal(row);

  row = valid_row();
  row.prefix = "replay:";
  EXPECT_NE(refusal(row).find("overlaps the replay backend's 'replay:'"), std::string::npos) << refusal(row);

  row = valid_row();
  row.prefix = "";
  EXPECT_NE(refusal(row).find("is not a word ending in ':'"), std::string::npos) << refusal(row);

  row = valid_row();
  row.prefix = "bench";
  EXPECT_NE(refusal(row).find("is not a word ending in ':'"), std::string::npos) << refusal(row);

  row = valid_row();
  row.name = "";
  EXPECT_NE(refusal(row).find("its name is empty"), std::string::npos) << refusal(row);

  row = valid_row();
  row.open = nullptr;
  EXPECT_NE(refusal(row).find("no open function"), std::string::npos) << refusal(row);

  row = valid_row();
  row.spec_help = nullptr;
  EXPECT_NE(refusal(row).find("no --device help"), std::string::npos) << refusal(row);

  row = valid_row();
  row.library_keyword = "bench_library";
  EXPECT_NE(refusal(row).find("only one of its library keyword and environment variable"), std::string::npos)
      << refusal(row);

  EXPECT_EQ(device_spec_help(), help_before) << "a refused row must not join the table";
  EXPECT_THROW(open_gpu("bench:x"), Error);
}

}  // namespace
}  // namespace dvfslab
