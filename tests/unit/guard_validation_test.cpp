#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "dvfslab/error.hpp"
#include "dvfslab/guard.hpp"
#include "scratch_dir.hpp"
#include "unit/support/file_backed_gpu.hpp"

namespace dvfslab {
namespace {

using testing::FileBackedGpu;
using testing::ScratchDir;

// Runs `call`, expects an exception of type E and returns its message.
template <typename E, typename Call>
std::string message_of(Call call) {
  try {
    call();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no exception of the expected type";
  return "";
}

class GuardValidation : public ::testing::Test {
 protected:
  ScratchDir dir;
  FileBackedGpu gpu{(dir / "state.json").string()};
  void validate(const Setting& setting) {
    validate_setting(gpu.identity().name, gpu.clock_table(), gpu.power_limits(), setting);
  }
};

TEST_F(GuardValidation, UnsupportedSmClockNamesTheNearestSupportedOnes) {
  const std::string message = message_of<ConfigError>([&] {
    validate(Setting{1234, std::nullopt, std::nullopt});
  });
  EXPECT_EQ(message,
            "SM clock 1234 MHz is not supported by Test GPU at memory clock 1000 MHz; nearest supported: "
            "1200 MHz or 1300 MHz (1000–1500 MHz, 6 clocks)");
}

TEST_F(GuardValidation, SmClockIsCheckedAgainstTheRequestedMemoryClock) {
  EXPECT_NO_THROW(validate(Setting{1200, 1000, std::nullopt}));
  const std::string message = message_of<ConfigError>([&] { validate(Setting{1200, 500, std::nullopt}); });
  EXPECT_NE(message.find("at memory clock 500 MHz; nearest supported: 1000 MHz (800–1000 MHz, 3 clocks)"),
            std::string::npos)
      << message;
}

TEST_F(GuardValidation, UnsupportedMemoryClockNamesTheNearestOnes) {
  const std::string message = message_of<ConfigError>([&] {
    validate(Setting{std::nullopt, 700, std::nullopt});
  });
  EXPECT_EQ(message,
            "memory clock 700 MHz is not supported by Test GPU; nearest supported: 500 MHz or 1000 MHz "
            "(500–1000 MHz, 2 clocks)");
}

TEST_F(GuardValidation, PowerLimitOutsideTheRangeGivesTheRange) {
  EXPECT_NO_THROW(validate(Setting{std::nullopt, std::nullopt, 100}));
  EXPECT_NO_THROW(validate(Setting{std::nullopt, std::nullopt, 300}));
  const std::string message = message_of<ConfigError>([&] {
    validate(Setting{std::nullopt, std::nullopt, 301});
  });
  EXPECT_EQ(message, "power limit 301 W is outside the range of Test GPU: 100–300 W");
  EXPECT_THROW(validate(Setting{std::nullopt, std::nullopt, 99}), ConfigError);
}

TEST_F(GuardValidation, DefaultOnlyPlansNeedNoPermission) {
  const std::vector<Setting> plan{Setting{}, Setting{}};
  EXPECT_NO_THROW(check_clock_changes_allowed(plan, false, false));
  gpu.set_read_only(true);
  EXPECT_NO_THROW(validate_plan(gpu, plan, false));
}

TEST_F(GuardValidation, ClockChangesWithoutPermissionExplainTheFlag) {
  const std::vector<Setting> plan{Setting{}, Setting{1200, std::nullopt, std::nullopt}};
  const std::string message =
      message_of<PermissionError>([&] { check_clock_changes_allowed(plan, false, false); });
  EXPECT_NE(message.find("sm=1200 mem=default pl=default"), std::string::npos) << message;
  EXPECT_NE(message.find("--allow-clock-changes"), std::string::npos) << message;
  EXPECT_NO_THROW(check_clock_changes_allowed(plan, true, false));
}

TEST_F(GuardValidation, ReadOnlyModeRefusesClockChangesEvenWhenAllowed) {
  gpu.set_read_only(true);
  const std::vector<Setting> plan{Setting{std::nullopt, std::nullopt, 200}};
  const std::string message = message_of<PermissionError>([&] { validate_plan(gpu, plan, true); });
  EXPECT_NE(message.find("DVFSLAB_READ_ONLY=1"), std::string::npos) << message;
  EXPECT_TRUE(gpu.calls().empty());
}

TEST_F(GuardValidation, ValidatingAPlanMakesNoControlCall) {
  const std::vector<Setting> plan{Setting{1300, 1000, 200}, Setting{1400, std::nullopt, std::nullopt}};
  EXPECT_NO_THROW(validate_plan(gpu, plan, true));
  const std::vector<Setting> bad{Setting{1300, 1000, 200}, Setting{1450, std::nullopt, std::nullopt}};
  EXPECT_THROW(validate_plan(gpu, bad, true), ConfigError);
  EXPECT_TRUE(gpu.calls().empty());
  EXPECT_EQ(gpu.control_state(), FileBackedGpu::factory_state());
}

}  // namespace
}  // namespace dvfslab
