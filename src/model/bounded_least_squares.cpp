#include "model/bounded_least_squares.hpp"


namespace dvfslab::model {

Eigen::VectorXd bounded_least_squares(const Eigen::MatrixXd& a, const Eigen::VectorXd& b) {
  const auto columns = static_cast<int>(a.cols());
  Eigen::VectorXd best = Eigen::VectorXd::Zero(columns);
  double best_cost = b.squaredNorm();
  for (unsigned mask = 1; mask < (1u << columns); ++mask) {
    std::vector<int> chosen;
    for (int c = 0; c < columns; ++c)
      if (mask & (1u << c)) chosen.push_back(c);
    Eigen::MatrixXd sub(a.rows(), static_cast<Eigen::Index>(chosen.size()));
    for (std::size_t i = 0; i < chosen.size(); ++i) sub.col(static_cast<Eigen::Index>(i)) = a.col(chosen[i]);
    const Eigen::VectorXd solution = sub.colPivHouseholderQr().solve(b);
    if ((solution.array() < 0).any() || !solution.allFinite()) continue;
    const double cost = (sub * solution - b).squaredNorm();
    if (cost < best_cost - 1e-15 * std::max(1.0, best_cost)) {
      best_cost = cost;
      best.setZero();
      for (std::size_t i = 0; i < chosen.size(); ++i) best(chosen[i]) = solution(static_cast<Eigen::Index>(i));
    }
  }
  return best;
}

}  // namespace dvfslab::model
