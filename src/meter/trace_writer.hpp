#pragma once
// Writes a meter's per-sample trace as CSV or JSON, chosen by the file extension.
#include <filesystem>
#include <vector>

#include "dvfslab/types.hpp"

namespace dvfslab::meter {

// Throws ConfigError for an extension other than .csv / .json or an unwritable path.
void write_trace(const std::filesystem::path& path, const std::vector<Telemetry>& samples, bool simulated);

}  // namespace dvfslab::meter
