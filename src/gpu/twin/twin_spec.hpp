#pragma once
// The text after "twin:" in a --device spec: FILE[#GPU NAME][@OPTIONS]
// (docs/twins.md#the-spec).
#include <filesystem>
#include <string>
#include <string_view>

#include "dvfslab/twin.hpp"

namespace dvfslab::twin {

struct TwinSpec {
  std::filesystem::path path;
  std::string gpu_name;  // empty: the file's only GPU
  TwinNoise noise;
};

// Throws UsageError for malformed text (empty, an empty GPU name, an unknown or
// malformed option) and ConfigError when no file matches.
TwinSpec parse_twin_spec(std::string_view text);

}  // namespace dvfslab::twin
