#include "gpu/twin/twin_spec.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "dvfslab/error.hpp"

namespace dvfslab::twin {
namespace {

namespace fs = std::filesystem;

constexpr double kMaxNoisePercent = 25.0;  // with draws clipped to ±3 sigma, every factor stays above 0.25
constexpr std::string_view kOptionsHelp = "noise=P%, time_noise=P%, power_noise=P%, seed=N";

bool is_file(const std::string& path) {
  std::error_code error;
  return !path.empty() && fs::is_regular_file(path, error);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Digits, optionally a point and more digits: what strtod reads besides (hex, an
// exponent, a bare trailing point) is not a percentage a user writes.
bool is_plain_decimal(std::string_view text) {
  const std::size_t point = text.find('.');
  const std::string_view whole = text.substr(0, point);
  const std::string_view fraction = point == std::string_view::npos ? "1" : text.substr(point + 1);
  const auto digits = [](std::string_view part) {
    return !part.empty() && std::all_of(part.begin(), part.end(), is_digit);
  };
  return digits(whole) && digits(fraction);
}

// "1%", "0.5%": a percentage from 0 to kMaxNoisePercent, as a fraction.
double parse_noise(std::string_view key, std::string_view value) {
  const auto refuse = [&] {
    return UsageError(fmt::format("twin option {}={}: give a percentage from 0% to {}%, e.g. {}=1%", key,
                                  value, kMaxNoisePercent, key));
  };
  if (value.size() < 2 || value.back() != '%') throw refuse();
  const std::string number(value.substr(0, value.size() - 1));
  if (!is_plain_decimal(number)) throw refuse();
  const double percent = std::strtod(number.c_str(), nullptr);
  if (percent > kMaxNoisePercent) throw refuse();
  return percent / 100.0;
}

std::uint64_t parse_seed(std::string_view value) {
  std::uint64_t seed = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), seed);
  if (value.empty() || error != std::errc() || end != value.data() + value.size()) {
    throw UsageError(
        fmt::format("twin option seed={}: give a whole number from 0 to 18446744073709551615", value));
  }
  return seed;
}

// "noise=1%,seed=7". A specific time_noise / power_noise wins over noise, in any order.
TwinNoise parse_options(std::string_view text) {
  if (text.empty())
    throw UsageError(
        fmt::format("twin: nothing after '@'; give options ({}) or leave out the '@'", kOptionsHelp));
  std::optional<double> both, time, power;
  std::optional<std::uint64_t> seed;
  std::vector<std::string> seen;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t comma = std::min(text.find(',', begin), text.size());
    const std::string_view option = text.substr(begin, comma - begin);
    const std::size_t equals = option.find('=');
    if (equals == std::string_view::npos) {
      throw UsageError(fmt::format("twin option '{}': write key=value ({})", option, kOptionsHelp));
    }
    const std::string key(option.substr(0, equals));
    const std::string_view value = option.substr(equals + 1);
    for (const auto& earlier : seen) {
      if (earlier == key) throw UsageError(fmt::format("twin option {} is given twice", key));
    }
    seen.push_back(key);
    if (key == "noise") {
      both = parse_noise(key, value);
    } else if (key == "time_noise") {
      time = parse_noise(key, value);
    } else if (key == "power_noise") {
      power = parse_noise(key, value);
    } else if (key == "seed") {
      seed = parse_seed(value);
    } else {
      throw UsageError(fmt::format("twin option '{}' is unknown; the options are {}", key, kOptionsHelp));
    }
    begin = comma + 1;
  }
  TwinNoise noise;
  noise.time_sigma = time.value_or(both.value_or(0.0));
  noise.power_sigma = power.value_or(both.value_or(0.0));
  if (seed) noise.seed = *seed;
  return noise;
}

}  // namespace

TwinSpec parse_twin_spec(std::string_view text) {
  if (text.empty()) {
    throw UsageError(
        "twin: needs a sweep table, e.g. --device twin:data/published/v100-kernels-core.csv@noise=1%,seed=7");
  }
  TwinSpec spec;
  std::string body(text);
  // A file of exactly this name wins: a name may hold '#' or '@'. Otherwise the
  // options follow the last '@' when that part has a '=' (or is empty).
  if (!is_file(body)) {
    const std::size_t at = body.rfind('@');
    if (at != std::string::npos) {
      const std::string_view options = std::string_view(body).substr(at + 1);
      if (options.empty() || options.find('=') != std::string_view::npos) {
        spec.noise = parse_options(options);
        body.resize(at);
      }
    }
  }
  if (is_file(body)) {
    spec.path = body;
    return spec;
  }
  // FILE#GPU NAME: the first '#' whose left part is a file.
  for (std::size_t hash = body.find('#'); hash != std::string::npos; hash = body.find('#', hash + 1)) {
    if (!is_file(body.substr(0, hash))) continue;
    spec.path = body.substr(0, hash);
    spec.gpu_name = body.substr(hash + 1);
    if (spec.gpu_name.empty()) {
      throw UsageError(fmt::format("twin:{}: nothing after '#'; name a GPU of the table or leave out the '#'",
                                   std::string(text)));
    }
    return spec;
  }
  const std::string shown = body.substr(0, body.find('#'));
  throw ConfigError(
      fmt::format("twin:{}: no such file '{}' (give the path of a sweep-table CSV, then "
                  "#GPU NAME and @OPTIONS where needed)",
                  std::string(text), shown.empty() ? body : shown));
}

}  // namespace dvfslab::twin
