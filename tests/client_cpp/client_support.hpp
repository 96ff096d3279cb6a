// What the C++ client tests share: the Panda they register, the core's model of it, a row-major flat
// vector as a matrix, element-wise comparison with the core's answer, and the `denoc` tool run as a process.
#pragma once

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "denoc/denoc.hpp"
#include "server/server_process.hpp"
#include "server/test_support.hpp"
#include "support/run_process.hpp"

namespace denoc::test {

inline const std::string kPanda = std::string(DENOC_MODELS_DIR) + "/panda_hand.urdf";
inline const std::string kTip = "panda_hand_tcp";

inline Model pandaModel() {
  UrdfOptions o;
  o.tip_link = kTip;
  return buildModelFromUrdfFile(kPanda, o);
}

/// count x n matrix from a flat row-major vector, element by element (independent of the client's mapping).
inline Eigen::MatrixXd fromFlat(const std::vector<double>& v, int count, int n) {
  Eigen::MatrixXd m(count, n);
  for (int k = 0; k < count; ++k) {
    for (int j = 0; j < n; ++j) m(k, j) = v[static_cast<std::size_t>(k * n + j)];
  }
  return m;
}

/// Every element within tol relative to the core's (absolute below 1).
inline ::testing::AssertionResult close(const Eigen::MatrixXd& got, const Eigen::MatrixXd& want,
                                        double tol = 1e-12) {
  if (got.rows() != want.rows() || got.cols() != want.cols()) {
    return ::testing::AssertionFailure()
           << "shape " << got.rows() << "x" << got.cols() << " vs " << want.rows() << "x" << want.cols();
  }
  for (Eigen::Index i = 0; i < got.rows(); ++i) {
    for (Eigen::Index j = 0; j < got.cols(); ++j) {
      if (!(std::abs(got(i, j) - want(i, j)) <= tol * std::max(1.0, std::abs(want(i, j))))) {
        return ::testing::AssertionFailure()
               << "(" << i << ", " << j << "): " << got(i, j) << " vs core " << want(i, j);
      }
    }
  }
  return ::testing::AssertionSuccess();
}

/// Runs the `denoc` tool with args; its output files go to a fresh name under dir.
inline ::denoc::testing::ProcessOutcome runDenoc(const TempDir& dir, const std::vector<std::string>& args) {
  static int counter = 0;
  return ::denoc::testing::runProcess(DENOC_CLI, args, dir.str("cli" + std::to_string(counter++)));
}

}  // namespace denoc::test
