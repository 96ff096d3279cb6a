// Joint trajectories of the papers' examples and the joint torques along them.
//
// The cycloidal rest-to-rest trajectory of Saha 1999 eq. 38/39 (after Cyril 1988):
//   theta(t) = theta0 + (thetaT - theta0) / (2 pi) * (2 pi t / T - sin(2 pi t / T)),  0 <= t <= T,
// whose velocity and acceleration vanish at both ends. The paper prints the normalised form
// 1/2 [2 pi t / T - sin(2 pi t / T)]; docs/design.md gives the scaled reading used here.
#pragma once

#include <Eigen/Core>
#include <vector>

#include "denoc/fwd.hpp"

namespace denoc {

/// theta(t) of eq. 38/39 for every joint (rad for revolute joints, m for prismatic ones). Outside [0, T]
/// the trajectory is held at rest at its end points.
class CycloidalTrajectory {
 public:
  /// Throws std::invalid_argument if theta0 and thetaT differ in size or are empty, an entry is not finite,
  /// or T is not a positive finite number.
  CycloidalTrajectory(Eigen::VectorXd theta0, Eigen::VectorXd thetaT, double T);

  int size() const { return static_cast<int>(theta0_.size()); }
  double duration() const { return T_; }
  const Eigen::VectorXd& start() const { return theta0_; }
  const Eigen::VectorXd& end() const { return thetaT_; }

  /// Position, velocity and acceleration at time t. The outputs must already have size() entries (no
  /// allocation); throws std::invalid_argument otherwise.
  void evaluate(double t, Eigen::Ref<Eigen::VectorXd> q, Eigen::Ref<Eigen::VectorXd> qd,
                Eigen::Ref<Eigen::VectorXd> qdd) const;

 private:
  Eigen::VectorXd theta0_;
  Eigen::VectorXd thetaT_;
  double T_;
};

/// The Stanford arm trajectory of eq. 39 as docs/design.md reads it: T = 10 s, theta_i(0) = 0 except
/// theta_2(0) = 90 deg, theta_i(T) = 60 deg for the revolute joints, b_3 from 0 to 0.1 m. Joint order and
/// units match stanfordArmDH().
CycloidalTrajectory stanfordEq39Trajectory();

/// The normalised trajectory of eq. 38 for an n-joint arm: every joint from 0 to pi rad in T seconds
/// (1/2 [2 pi t / T - sin(2 pi t / T)] is the scaled form with theta(T) - theta(0) = pi).
CycloidalTrajectory planarEq38Trajectory(int n = 3, double T = 10.0);

/// Samples of a trajectory with the joint torques needed to follow it; one row per sample time.
struct TorqueHistory {
  Eigen::VectorXd t;    // sample times
  Eigen::MatrixXd q;    // samples x n
  Eigen::MatrixXd qd;   // samples x n
  Eigen::MatrixXd qdd;  // samples x n
  Eigen::MatrixXd tau;  // samples x n: inverseDynamics(q, qd, qdd), gravity from the model
};

/// Sample times 0, dt, 2 dt, ..., t_end (t_end included even when dt does not divide it; each time is
/// computed as k * dt, not accumulated). Throws std::invalid_argument unless 0 < dt and 0 < t_end, finite.
std::vector<double> uniformTimes(double t_end, double dt);

/// Evaluates the trajectory at the given times and the joint torques along it with inverseDynamics.
/// Throws std::invalid_argument if the trajectory's size differs from the model's or a time is not finite.
TorqueHistory computeTorqueHistory(const Model& model, const CycloidalTrajectory& trajectory,
                                   const std::vector<double>& times);

}  // namespace denoc
