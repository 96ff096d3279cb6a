// What the C++ client tests share: the Panda they register, the core's model of it, a row-major flat
// vector as a matrix, element-wise comparison with the core's answer, and the `denoc` tool run as a process.
#pragma once

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "denoc/client/types.hpp"
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

/// K rollouts of T steps of an n-joint fixed-root model from random numbers: X0 (K x 2n, rows [q; qd], within
/// 0.5) from x_seed, one T x n control sequence per rollout (within u_scale) from u_seed + k, and the options
/// of T steps of 0.01 s, linearized.
struct RolloutInputs {
  Eigen::MatrixXd X0;
  std::vector<Eigen::MatrixXd> U;
  client::RolloutOptions options;
};

inline RolloutInputs randomRollouts(int K, int T, int n, unsigned x_seed, unsigned u_seed,
                                    double u_scale = 5.0) {
  RolloutInputs in;
  in.X0 = fromFlat(randomStates(K, 2 * n, x_seed, 0.5), K, 2 * n);
  for (int k = 0; k < K; ++k)
    in.U.push_back(fromFlat(randomStates(T, n, u_seed + static_cast<unsigned>(k), u_scale), T, n));
  in.options.steps = static_cast<std::uint32_t>(T);
  in.options.dt = 0.01;
  in.options.linearize = true;
  return in;
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
