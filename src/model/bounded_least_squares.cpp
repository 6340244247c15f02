#include "model/bounded_least_squares.hpp"

#include <algorithm>

namespace dvfslab::model {

Eigen::VectorXd bounded_least_squares(const Eigen::MatrixXd& a, const Eigen::VectorXd& b) {
  const auto columns = static_cast<int>(a.cols());
  // On the normal equations: the subsets are solved as small (≤ 5 × 5) systems, and
  // the prior's rows in A keep them well conditioned.
  const Eigen::MatrixXd gram = a.transpose() * a;
  const Eigen::VectorXd moment = a.transpose() * b;
  const auto cost_of = [&](const Eigen::VectorXd& theta) {
    return theta.dot(gram * theta) - 2 * moment.dot(theta) + b.squaredNorm();
  };
  // The problem is convex: a feasible unconstrained minimum is the answer.
  const Eigen::VectorXd unconstrained = gram.ldlt().solve(moment);
  if (unconstrained.allFinite() && (unconstrained.array() >= 0).all()) return unconstrained;

  Eigen::VectorXd best = Eigen::VectorXd::Zero(columns);
  double best_cost = b.squaredNorm();
  for (unsigned mask = 1; mask < (1u << columns); ++mask) {
    std::vector<int> chosen;
    for (int c = 0; c < columns; ++c)
      if (mask & (1u << c)) chosen.push_back(c);
    const auto size = static_cast<Eigen::Index>(chosen.size());
    Eigen::MatrixXd sub_gram(size, size);
    Eigen::VectorXd sub_moment(size);
    for (Eigen::Index i = 0; i < size; ++i) {
      sub_moment(i) = moment(chosen[static_cast<std::size_t>(i)]);
      for (Eigen::Index j = 0; j < size; ++j)
        sub_gram(i, j) = gram(chosen[static_cast<std::size_t>(i)], chosen[static_cast<std::size_t>(j)]);
    }
    const Eigen::VectorXd solution = sub_gram.ldlt().solve(sub_moment);
    if ((solution.array() < 0).any() || !solution.allFinite()) continue;
    Eigen::VectorXd theta = Eigen::VectorXd::Zero(columns);
    for (Eigen::Index i = 0; i < size; ++i) theta(chosen[static_cast<std::size_t>(i)]) = solution(i);
    const double cost = cost_of(theta);
    if (cost < best_cost - 1e-15 * std::max(1.0, best_cost)) best_cost = cost, best = theta;
  }
  return best;
}

}  // namespace dvfslab::model
