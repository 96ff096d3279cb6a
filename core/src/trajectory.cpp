#include "denoc/trajectory.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

#include "denoc/algorithm/inverse_dynamics.hpp"
#include "denoc/data.hpp"
#include "denoc/model.hpp"

namespace denoc {

CycloidalTrajectory::CycloidalTrajectory(Eigen::VectorXd theta0, Eigen::VectorXd thetaT, double T)
    : theta0_(std::move(theta0)), thetaT_(std::move(thetaT)), T_(T) {
  if (theta0_.size() == 0) throw std::invalid_argument("CycloidalTrajectory: theta0 is empty");
  if (thetaT_.size() != theta0_.size()) {
    throw std::invalid_argument("CycloidalTrajectory: thetaT has " + std::to_string(thetaT_.size()) +
                                " entries, theta0 has " + std::to_string(theta0_.size()));
  }
  if (!theta0_.allFinite()) throw std::invalid_argument("CycloidalTrajectory: theta0 has a non-finite entry");
  if (!thetaT_.allFinite()) throw std::invalid_argument("CycloidalTrajectory: thetaT has a non-finite entry");
  if (!(std::isfinite(T_) && T_ > 0.0)) {
    throw std::invalid_argument("CycloidalTrajectory: T is " + std::to_string(T_) +
                                ", expected a positive finite duration");
  }
}

void CycloidalTrajectory::evaluate(double t, Eigen::Ref<Eigen::VectorXd> q, Eigen::Ref<Eigen::VectorXd> qd,
                                   Eigen::Ref<Eigen::VectorXd> qdd) const {
  const Eigen::Index n = theta0_.size();
  if (q.size() != n || qd.size() != n || qdd.size() != n) {
    throw std::invalid_argument("CycloidalTrajectory::evaluate: outputs need " + std::to_string(n) +
                                " entries");
  }
  if (!std::isfinite(t)) throw std::invalid_argument("CycloidalTrajectory::evaluate: t is not finite");
  constexpr double two_pi = 2.0 * std::numbers::pi;
  if (t <= 0.0 || t >= T_) {
    q = t <= 0.0 ? theta0_ : thetaT_;
    qd.setZero();
    qdd.setZero();
    return;
  }
  // s(t) = (x - sin x) / (2 pi) with x = 2 pi t / T; s' = (1 - cos x) / T; s'' = 2 pi sin x / T^2
  const double x = two_pi * t / T_;
  const double s = (x - std::sin(x)) / two_pi;
  const double sd = (1.0 - std::cos(x)) / T_;
  const double sdd = two_pi * std::sin(x) / (T_ * T_);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double delta = thetaT_[i] - theta0_[i];
    q[i] = theta0_[i] + delta * s;
    qd[i] = delta * sd;
    qdd[i] = delta * sdd;
  }
}

CycloidalTrajectory stanfordEq39Trajectory() {
  constexpr double deg = std::numbers::pi / 180.0;
  Eigen::VectorXd theta0(6), thetaT(6);
  theta0 << 0.0, 90.0 * deg, 0.0, 0.0, 0.0, 0.0;
  thetaT << 60.0 * deg, 60.0 * deg, 0.1, 60.0 * deg, 60.0 * deg, 60.0 * deg;
  return {theta0, thetaT, 10.0};
}

CycloidalTrajectory planarEq38Trajectory(int n, double T) {
  if (n <= 0) throw std::invalid_argument("planarEq38Trajectory: n must be positive");
  return {Eigen::VectorXd::Zero(n), Eigen::VectorXd::Constant(n, std::numbers::pi), T};
}

std::vector<double> uniformTimes(double t_end, double dt) {
  if (!(std::isfinite(t_end) && t_end > 0.0)) {
    throw std::invalid_argument("uniformTimes: t_end is " + std::to_string(t_end) + ", expected > 0");
  }
  if (!(std::isfinite(dt) && dt > 0.0)) {
    throw std::invalid_argument("uniformTimes: dt is " + std::to_string(dt) + ", expected > 0");
  }
  if (t_end / dt > 1e9) throw std::invalid_argument("uniformTimes: more than 1e9 samples");
  // k * dt for k = 0..K with K dt <= t_end (to rounding); t_end replaces K dt when they agree to rounding,
  // else is appended (the same grid as SimulationOptions::dt_out)
  std::vector<double> times;
  const auto steps = static_cast<long>(std::floor(t_end / dt + 1e-9));
  times.reserve(static_cast<std::size_t>(steps) + 2);
  for (long k = 0; k <= steps; ++k) times.push_back(static_cast<double>(k) * dt);
  if (std::abs(times.back() - t_end) <= 1e-8 * dt) {
    times.back() = t_end;
  } else {
    times.push_back(t_end);
  }
  return times;
}

TorqueHistory computeTorqueHistory(const Model& model, const CycloidalTrajectory& trajectory,
                                   const std::vector<double>& times) {
  if (trajectory.size() != model.n) {
    throw std::invalid_argument("computeTorqueHistory: the trajectory has " +
                                std::to_string(trajectory.size()) + " joints, the model " +
                                std::to_string(model.n));
  }
  const auto rows = static_cast<Eigen::Index>(times.size());
  const int n = model.n;
  TorqueHistory h;
  h.t.resize(rows);
  h.q.resize(rows, n);
  h.qd.resize(rows, n);
  h.qdd.resize(rows, n);
  h.tau.resize(rows, n);
  Data data(model);
  Eigen::VectorXd q(n), qd(n), qdd(n);
  for (Eigen::Index k = 0; k < rows; ++k) {
    const double t = times[static_cast<std::size_t>(k)];
    trajectory.evaluate(t, q, qd, qdd);
    h.t[k] = t;
    h.q.row(k) = q.transpose();
    h.qd.row(k) = qd.transpose();
    h.qdd.row(k) = qdd.transpose();
    h.tau.row(k) = inverseDynamics(model, data, q, qd, qdd).transpose();
  }
  return h;
}

}  // namespace denoc
