#pragma once
// Checks of numeric options whose failure reads as a sentence: CLI11's own
// PositiveNumber prints its range as "0.000000 to 1.797...e308" in full, and its
// Range lets "nan" through (every comparison with NaN is false).
#include <CLI/CLI.hpp>

namespace dvfslab::cli {

// A whole number of 1 or more. A value that is not a number passes on to the
// option's own conversion, which says so.
CLI::Validator positive_whole_number();
// A finite number of 0 or more (seconds, ...).
CLI::Validator non_negative_number();
// A number from `low` to `high`, both included.
CLI::Validator number_from(double low, double high);

}  // namespace dvfslab::cli
