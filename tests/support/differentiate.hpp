// Jacobians of vector functions for the tests, by two independent routes: forward-mode automatic
// differentiation with the dual scalar (one pass per column) and central finite differences.
#pragma once

#include <Eigen/Core>

#include "support/dual.hpp"

namespace denoc::testing {

using DualVec = Eigen::Matrix<Dual, Eigen::Dynamic, 1>;

/// d f / d x at x by automatic differentiation: f maps a dual vector to a dual vector (or matrix, read
/// column-major); column j comes from one pass seeded with the unit vector e_j.
template <typename F>
Eigen::MatrixXd adJacobian(const Eigen::VectorXd& x, F&& f) {
  Eigen::MatrixXd J;
  for (Eigen::Index j = 0; j < x.size(); ++j) {
    const DualVec y = f(seed(x, Eigen::VectorXd::Unit(x.size(), j))).reshaped();
    if (j == 0) J.resize(y.size(), x.size());
    J.col(j) = derivs(y);
  }
  return J;
}

/// d f / d x at x by central differences with step eps: f maps a double vector to a double vector (or
/// matrix, read column-major).
template <typename F>
Eigen::MatrixXd fdJacobian(const Eigen::VectorXd& x, F&& f, double eps) {
  Eigen::MatrixXd J;
  for (Eigen::Index j = 0; j < x.size(); ++j) {
    Eigen::VectorXd xp = x, xm = x;
    xp[j] += eps;
    xm[j] -= eps;
    const Eigen::VectorXd yp = f(xp).reshaped(), ym = f(xm).reshaped();
    if (j == 0) J.resize(yp.size(), x.size());
    J.col(j) = (yp - ym) / (2.0 * eps);
  }
  return J;
}

}  // namespace denoc::testing
