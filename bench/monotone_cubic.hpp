// Monotone piecewise-cubic interpolation (Fritsch–Carlson) of measured values over a
// knob, for search_bench's dense curves: between two measured settings it never
// overshoots them, so it adds no minimum the measurements do not show.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

namespace dvfslab::bench {

class MonotoneCubic {
 public:
  // `x` strictly increasing, one `y` per x, at least two points.
  MonotoneCubic(std::vector<double> x, std::vector<double> y) : x_(std::move(x)), y_(std::move(y)) {
    const std::size_t n = x_.size();
    std::vector<double> secant(n - 1);
    for (std::size_t i = 0; i + 1 < n; ++i) secant[i] = (y_[i + 1] - y_[i]) / (x_[i + 1] - x_[i]);
    slope_.assign(n, 0.0);
    slope_.front() = secant.front();
    slope_.back() = secant.back();
    for (std::size_t i = 1; i + 1 < n; ++i) {
      // At a local extremum of the data the curve is flat, else the secants' mean.
      slope_[i] = secant[i - 1] * secant[i] <= 0 ? 0.0 : (secant[i - 1] + secant[i]) / 2;
    }
    for (std::size_t i = 0; i + 1 < n; ++i) {
      if (secant[i] == 0) {
        slope_[i] = slope_[i + 1] = 0;
        continue;
      }
      const double a = slope_[i] / secant[i];
      const double b = slope_[i + 1] / secant[i];
      const double length = std::hypot(a, b);
      if (length > 3) {  // Fritsch–Carlson: scale the slopes back into the monotone region
        slope_[i] = 3 * a / length * secant[i];
        slope_[i + 1] = 3 * b / length * secant[i];
      }
    }
  }

  double operator()(double at) const {
    const auto upper = std::upper_bound(x_.begin(), x_.end(), at);
    const std::size_t i =
        upper == x_.begin() ? 0 : std::min<std::size_t>(upper - x_.begin() - 1, x_.size() - 2);
    const double h = x_[i + 1] - x_[i];
    const double t = (at - x_[i]) / h;
    const double t2 = t * t;
    const double t3 = t2 * t;
    return (2 * t3 - 3 * t2 + 1) * y_[i] + (t3 - 2 * t2 + t) * h * slope_[i] +
           (-2 * t3 + 3 * t2) * y_[i + 1] + (t3 - t2) * h * slope_[i + 1];
  }

 private:
  std::vector<double> x_;
  std::vector<double> y_;
  std::vector<double> slope_;
};

}  // namespace dvfslab::bench
