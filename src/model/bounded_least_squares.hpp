#pragma once
// Non-negative least squares for the model's few coefficients.
#include <vector>

#include <Eigen/Dense>

namespace dvfslab::model {

// Minimises ‖A·θ − b‖² subject to θ ≥ 0.
// Exact: every set of active columns is tried (A has at most ~8 columns here).
Eigen::VectorXd bounded_least_squares(const Eigen::MatrixXd& a, const Eigen::VectorXd& b);

}  // namespace dvfslab::model
