#pragma once
// The model's form (include/dvfslab/model.hpp): its bases, the prior shape and the
// power limit acting through the clock. Shared by fitting and prediction.
#include <array>
#include <optional>
#include <string_view>
#include <vector>

namespace dvfslab::model::form {

inline constexpr std::size_t time_terms = 5;   // 1, 1/x, 1/x², (r/x − 1)⁺, 1/y
inline constexpr std::size_t power_terms = 5;  // 1, x, x·h, x·h², y with h = max(0, x − knee)
inline constexpr std::array<std::string_view, time_terms> time_names{"const", "inv_sm", "inv_sm2",
                                                                     "inv_sm_below_ridge", "inv_mem"};
inline constexpr std::array<std::string_view, power_terms> power_names{"const", "sm", "sm_knee", "sm_knee2",
                                                                       "mem"};

// Generic shapes, as shares of the time and the power at the reference clocks: most
// work scales with the SM clock, a little is fixed or memory-bound, no superlinear
// part; power is a fifth static, the rest dynamic, c·V²·f with the voltage flat below
// the knee and rising linearly above it: V ∝ 1 + s·h gives f·(1 + 2s·h + s²·h²).
// The fit pulls toward them only weakly.
inline constexpr std::array<double, time_terms> time_prior{0.10, 0.80, 0.0, 0.0, 0.10};
inline constexpr std::array<double, power_terms> power_prior{0.20, 0.40, 0.50, 0.50, 0.10};

// The SM clock fraction below which the firmware does not go under a power limit.
inline constexpr double lowest_sm_fraction = 0.1;

// Ridge clocks the fit tries: below r the work turns compute-bound, above it the time
// flattens (a roofline seen along the clock); 1 means no ridge in range.
inline constexpr std::array<double, 11> ridge_grid{0.45, 0.5, 0.55, 0.6, 0.65, 0.7,
                                                   0.75, 0.8, 0.85, 0.9, 1.0};

std::array<double, time_terms> time_basis(double x, double y, double ridge);
// The knee where the points cannot place one: none, the voltage rising over the
// whole range (a smooth cubic in the clock).
inline constexpr double prior_knee = 0.0;
// Knees the fit tries (fractions of the reference SM clock); 1 means no knee in range.
inline constexpr std::array<double, 12> knee_grid{0.45, 0.5, 0.55, 0.6, 0.65, 0.7,
                                                  0.75, 0.8, 0.85, 0.9, 0.95, 1.0};

std::array<double, power_terms> power_basis(double x, double y, double knee);

double evaluate_time(const std::vector<double>& coef, double ridge, double x, double y);
double evaluate_power(const std::vector<double>& coef, double knee, double x, double y);

// What the board draws under limit `limit_w` when it would draw `unlimited_w`:
// a smooth minimum, since the firmware holds the average a little under the limit
// as the draw approaches it.
double capped_power(double unlimited_w, double limit_w, double softness);

// The SM clock fraction (≤ x) at which the unlimited power equals `power_w`.
double clock_for_power(const std::vector<double>& power_coef, double knee, double x, double y,
                       double power_w);

}  // namespace dvfslab::model::form
