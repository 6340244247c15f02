// The twin's --device text: FILE[#GPU NAME][@OPTIONS], odd file names, and the
// errors for what it refuses.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "dvfslab/error.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/twin.hpp"
#include "gpu/twin/twin_spec.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

namespace fs = std::filesystem;
using twin::parse_twin_spec;

class TwinSpecText : public ::testing::Test {
 protected:
  void SetUp() override { write(path_); }
  static void write(const fs::path& path) {
    std::ofstream out(path);
    out << "source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default\n"
           "paper,GPU A,conv,1000,800,,2.0,100,0\n"
           "paper,GPU A,conv,1500,800,,1.5,150,1\n"
           "paper,GPU B,conv,1500,800,,1.0,120,1\n";
  }
  std::string message_of(const std::string& spec) {
    try {
      parse_twin_spec(spec);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  testing::ScratchDir scratch_;
  const fs::path path_ = scratch_ / "table.csv";
};

TEST_F(TwinSpecText, FileGpuAndOptionsAreParsed) {
  const auto spec = parse_twin_spec(path_.string() + "#GPU A@noise=1%,seed=7");
  EXPECT_EQ(spec.path, path_);
  EXPECT_EQ(spec.gpu_name, "GPU A");
  EXPECT_DOUBLE_EQ(spec.noise.time_sigma, 0.01);
  EXPECT_DOUBLE_EQ(spec.noise.power_sigma, 0.01);
  EXPECT_EQ(spec.noise.seed, 7u);
}

TEST_F(TwinSpecText, WithoutOptionsThereIsNoNoise) {
  const auto spec = parse_twin_spec(path_.string());
  EXPECT_EQ(spec.gpu_name, "");
  EXPECT_EQ(spec.noise.time_sigma, 0.0);
  EXPECT_EQ(spec.noise.power_sigma, 0.0);
}

TEST_F(TwinSpecText, SpecificNoiseWinsOverNoiseInAnyOrder) {
  const auto spec = parse_twin_spec(path_.string() + "#GPU B@time_noise=2.5%,noise=1%");
  EXPECT_DOUBLE_EQ(spec.noise.time_sigma, 0.025);
  EXPECT_DOUBLE_EQ(spec.noise.power_sigma, 0.01);
}

TEST_F(TwinSpecText, FileNamesWithHashAndAtStillOpen) {
  const fs::path odd = scratch_ / "odd#name@v2 (copy).csv";
  write(odd);
  EXPECT_EQ(parse_twin_spec(odd.string()).path, odd);
  const auto with_gpu = parse_twin_spec(odd.string() + "#GPU A@seed=3");
  EXPECT_EQ(with_gpu.path, odd);
  EXPECT_EQ(with_gpu.gpu_name, "GPU A");
  EXPECT_EQ(with_gpu.noise.seed, 3u);
  // The whole spec opens as a twin too.
  EXPECT_EQ(open_gpu("twin:" + odd.string() + "#GPU B@noise=0.5%")->identity().name, "GPU B");
}

TEST_F(TwinSpecText, EmptyTextIsAUsageError) {
  EXPECT_THROW(parse_twin_spec(""), UsageError);
  EXPECT_THROW(open_gpu("twin:"), UsageError);
}

TEST_F(TwinSpecText, MissingFileIsAConfigErrorNamingIt) {
  EXPECT_THROW(parse_twin_spec("/no/such/table.csv#GPU A@noise=1%"), ConfigError);
  EXPECT_NE(message_of("/no/such/table.csv#GPU A").find("no such file '/no/such/table.csv'"),
            std::string::npos);
}

TEST_F(TwinSpecText, UnknownGpuIsAConfigErrorListingTheGpus) {
  try {
    open_gpu("twin:" + path_.string() + "#GPU C");
    FAIL() << "an unknown GPU opened";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("GPU A, GPU B"), std::string::npos) << e.what();
  }
  EXPECT_THROW(open_gpu("twin:" + path_.string()), ConfigError);  // several GPUs, none named
}

TEST_F(TwinSpecText, EmptyGpuNameOrOptionsAreUsageErrors) {
  EXPECT_THROW(parse_twin_spec(path_.string() + "#"), UsageError);
  EXPECT_THROW(parse_twin_spec(path_.string() + "#GPU A@"), UsageError);
}

TEST_F(TwinSpecText, BadNoiseValuesAreRefusedWithTheExpectedForm) {
  for (const std::string bad : {"noise=1", "noise=abc%", "noise=-1%", "noise=26%", "noise=nan%", "noise=%",
                                "noise=", "noise=1e400%", "power_noise=+1%", "noise= 1%"}) {
    const std::string spec = path_.string() + "#GPU A@" + bad;
    EXPECT_THROW(parse_twin_spec(spec), UsageError) << bad;
    EXPECT_NE(message_of(spec).find("give a percentage from 0% to 25%"), std::string::npos) << bad;
  }
}

// strtod reads hexadecimal, exponents and a bare trailing point; docs/twins.md
// promises plain decimal numbers only.
TEST_F(TwinSpecText, L4_NoiseIsAPlainDecimalNumberNotWhatStrtodReads) {
  for (const std::string bad : {"noise=0x10%", "noise=1e1%", "noise=1.%", "noise=0x1p-3%", "noise=.5%",
                                "time_noise=1E0%", "noise=1.5.0%", "noise=inf%"}) {
    const std::string spec = path_.string() + "#GPU A@" + bad;
    EXPECT_THROW(parse_twin_spec(spec), UsageError) << bad;
  }
  EXPECT_DOUBLE_EQ(parse_twin_spec(path_.string() + "#GPU A@noise=0.5%").noise.time_sigma, 0.005);
  EXPECT_DOUBLE_EQ(parse_twin_spec(path_.string() + "#GPU A@noise=25%").noise.power_sigma, 0.25);
  EXPECT_DOUBLE_EQ(parse_twin_spec(path_.string() + "#GPU A@noise=007%").noise.time_sigma, 0.07);
}

TEST_F(TwinSpecText, BadSeedsUnknownAndRepeatedOptionsAreRefused) {
  for (const std::string bad : {"seed=-1", "seed=x", "seed=", "seed=18446744073709551616", "colour=red",
                                "noise=1%,noise=2%", "noise=1%,,seed=2", "noise=1%,"}) {
    EXPECT_THROW(parse_twin_spec(path_.string() + "#GPU A@" + bad), UsageError) << bad;
  }
  EXPECT_NE(message_of(path_.string() + "#GPU A@colour=red").find("noise=P%, time_noise=P%"),
            std::string::npos);
}

TEST_F(TwinSpecText, AModelFileThatIsNoModelIsAConfigError) {
  const fs::path model = scratch_ / "model.json";
  std::ofstream(model) << "{}";
  EXPECT_THROW(open_gpu("twin:" + model.string()), ConfigError);
}

}  // namespace
}  // namespace dvfslab
