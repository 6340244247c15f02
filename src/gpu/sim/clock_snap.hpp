#pragma once
// Checking requested clocks against a GPU's supported ones. Application clocks
// must be supported exactly (as NVML demands); a locked range is snapped inward to
// supported clocks, as the driver does. Refusals name the nearest supported values.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dvfslab::sim {

// `mhz` itself when `descending` holds it; otherwise throws ConfigError naming the
// nearest supported clocks. `what` names the knob ("graphics clock").
int require_supported_clock(const std::vector<int>& descending, int mhz, std::string_view what,
                            std::string_view gpu_name);

// The supported clocks inside [min_mhz, max_mhz] as (lowest, highest); throws
// ConfigError when the range is inverted or holds no supported clock.
std::pair<int, int> snap_clock_range(const std::vector<int>& descending, int min_mhz, int max_mhz,
                                     std::string_view what, std::string_view gpu_name);

// "1372 or 1380 MHz": the supported clocks on either side of `mhz`.
std::string nearest_supported_text(const std::vector<int>& descending, int mhz);

}  // namespace dvfslab::sim
