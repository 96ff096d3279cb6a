#include "denoc/simulate.hpp"

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "denoc/algorithm/check.hpp"
#include "denoc/algorithm/energy.hpp"
#include "denoc/configuration.hpp"
#include "denoc/forward_route.hpp"
#include "fixed_step.hpp"
#include "format.hpp"
#include "manifold_step.hpp"

namespace denoc {

namespace {

[[noreturn]] void bad(const std::string& field, const std::string& what) {
  throw std::invalid_argument("simulate: " + field + " " + what);
}

// the range is the dynamics' own (algorithm/check.hpp): kMaxPosition for q0, kMaxStateValue otherwise
void checkVec(const Eigen::Ref<const Eigen::VectorXd>& v, int n, const std::string& field,
              double bound = kMaxStateValue, const char* what = " (one per joint)") {
  if (v.size() != n) {
    bad(field, "has " + std::to_string(v.size()) + " entries, expected " + std::to_string(n) + what);
  }
  for (Eigen::Index i = 0; i < v.size(); ++i) {
    if (!(std::abs(v[i]) <= bound)) {
      bad(field + "[" + std::to_string(i) + "]",
          "is " + detail::formatNumber17(v[i]) + ", expected a finite number in [-" +
              detail::formatNumber17(bound) + ", " + detail::formatNumber17(bound) + "]");
    }
  }
}

void checkPositive(double x, const char* field) {
  if (!(std::isfinite(x) && x > 0.0))
    bad(field, "is " + detail::formatNumber17(x) + ", expected a positive finite number");
}

/// The output times of a run, generated on demand (no storage).
struct SampleTimes {
  const SimulationOptions& o;
  std::size_t count = 0;
  std::size_t grid = 0;  // grid points k * dt_out, k < grid; the last sample is t_end

  explicit SampleTimes(const SimulationOptions& options) : o(options) {
    if (!o.sample_times.empty()) {
      count = o.sample_times.size();
      return;
    }
    // k * dt_out for k = 0..K with K dt_out <= t_end (to rounding); t_end replaces K dt_out when they agree
    // to rounding, else is appended
    const auto K = static_cast<std::size_t>(std::floor(o.t_end / o.dt_out + 1e-9));
    const double last = static_cast<double>(K) * o.dt_out;
    grid = std::abs(last - o.t_end) <= 1e-8 * o.dt_out ? K : K + 1;
    count = grid + 1;
  }

  double operator[](std::size_t k) const {
    if (!o.sample_times.empty()) return o.sample_times[k];
    return k + 1 == count ? o.t_end : static_cast<double>(k) * o.dt_out;
  }
};

/// Runs part of an integration: a dynamics evaluation that fails inside it (NumericalError: a route's pivot
/// not positive) stops it as a divergence does. `t` is the integration's time, read when it fails.
template <typename F>
void integrating(const double& t, F&& f) {
  try {
    f();
  } catch (const DivergenceError&) {
    throw;
  } catch (const NumericalError& e) {
    throw DivergenceError("simulate: near t = " + detail::formatNumber17(t) + ": " + e.what());
  }
}

// Dormand-Prince 5(4) coefficients (Dormand and Prince 1980; Hairer, Norsett and Wanner, Table II.5.2)
constexpr double c2 = 1.0 / 5, c3 = 3.0 / 10, c4 = 4.0 / 5, c5 = 8.0 / 9;
constexpr double a21 = 1.0 / 5;
constexpr double a31 = 3.0 / 40, a32 = 9.0 / 40;
constexpr double a41 = 44.0 / 45, a42 = -56.0 / 15, a43 = 32.0 / 9;
constexpr double a51 = 19372.0 / 6561, a52 = -25360.0 / 2187, a53 = 64448.0 / 6561, a54 = -212.0 / 729;
constexpr double a61 = 9017.0 / 3168, a62 = -355.0 / 33, a63 = 46732.0 / 5247, a64 = 49.0 / 176,
                 a65 = -5103.0 / 18656;
constexpr double a71 = 35.0 / 384, a73 = 500.0 / 1113, a74 = 125.0 / 192, a75 = -2187.0 / 6784,
                 a76 = 11.0 / 84;
// b5 - b4: the embedded error estimate
constexpr double e1 = 71.0 / 57600, e3 = -71.0 / 16695, e4 = 71.0 / 1920, e5 = -17253.0 / 339200,
                 e6 = 22.0 / 525, e7 = -1.0 / 40;

}  // namespace

// ---------------------------------------------------------------------------------------------- torque

TorqueInput TorqueInput::constant(Eigen::VectorXd tau) {
  if (tau.size() == 0) throw std::invalid_argument("TorqueInput::constant: torque is empty");
  for (Eigen::Index i = 0; i < tau.size(); ++i) {
    if (!std::isfinite(tau[i])) {
      throw std::invalid_argument("TorqueInput::constant: torque[" + std::to_string(i) + "] is not finite");
    }
  }
  TorqueInput in;
  in.kind_ = Kind::Constant;
  in.values_.push_back(std::move(tau));
  return in;
}

TorqueInput TorqueInput::piecewiseLinear(std::vector<double> times, std::vector<Eigen::VectorXd> values) {
  const std::string fn = "TorqueInput::piecewiseLinear: ";
  if (times.empty()) throw std::invalid_argument(fn + "torque.times is empty (at least one knot)");
  if (values.size() != times.size()) {
    throw std::invalid_argument(fn + "torque.values has " + std::to_string(values.size()) +
                                " vectors, torque.times " + std::to_string(times.size()));
  }
  for (std::size_t k = 0; k < times.size(); ++k) {
    if (!std::isfinite(times[k])) {
      throw std::invalid_argument(fn + "torque.times[" + std::to_string(k) + "] is not finite");
    }
    if (k > 0 && !(times[k] > times[k - 1])) {
      throw std::invalid_argument(fn + "torque.times[" + std::to_string(k) +
                                  "] = " + detail::formatNumber17(times[k]) +
                                  " does not exceed the previous time (strictly increasing times expected)");
    }
    if (values[k].size() == 0 || values[k].size() != values[0].size()) {
      throw std::invalid_argument(fn + "torque.values[" + std::to_string(k) + "] has " +
                                  std::to_string(values[k].size()) + " entries, expected " +
                                  std::to_string(values[0].size()) + " (all knots the same, non-empty)");
    }
    if (!values[k].allFinite()) {
      throw std::invalid_argument(fn + "torque.values[" + std::to_string(k) + "] has a non-finite entry");
    }
  }
  TorqueInput in;
  in.kind_ = Kind::PiecewiseLinear;
  in.times_ = std::move(times);
  in.values_ = std::move(values);
  return in;
}

void TorqueInput::evaluate(double t, Eigen::Ref<Eigen::VectorXd> out) const {
  switch (kind_) {
    case Kind::Zero:
      out.setZero();
      return;
    case Kind::Constant:
      out = values_.front();
      return;
    case Kind::PiecewiseLinear: {
      if (!(t > times_.front())) {
        out = values_.front();
        return;
      }
      if (t >= times_.back()) {
        out = values_.back();
        return;
      }
      // times_[k] <= t < times_[k + 1]
      const auto it = std::upper_bound(times_.begin(), times_.end(), t);
      const auto k1 = static_cast<std::size_t>(it - times_.begin());
      const std::size_t k0 = k1 - 1;
      const double s = (t - times_[k0]) / (times_[k1] - times_[k0]);
      out = (1.0 - s) * values_[k0] + s * values_[k1];
      return;
    }
  }
}

// ------------------------------------------------------------------------------------------ validation

void validateSimulation(const Model& model, const Eigen::Ref<const Eigen::VectorXd>& q0,
                        const Eigen::Ref<const Eigen::VectorXd>& qd0, const SimulationOptions& o) {
  const int n = model.n;
  if (model.serial) {
    checkVec(q0, n, "q0", kMaxPosition);
    checkVec(qd0, n, "qd0");
  } else {
    // a tree model: q0 on the configuration manifold (nq, a unit quaternion for a floating root), qd0 = v0
    checkVec(q0, model.nq, "q0", kMaxPosition, " (nq: the root's coordinates, then one per joint)");
    checkConfiguration(model, q0, "simulate", "q0");
    checkVec(qd0, model.nv, "qd0", kMaxStateValue, " (nv: the root's velocity, then one per joint)");
    if (o.route == ForwardRoute::Fixman) {
      bad("route", "ForwardRoute::Fixman is derived for serial chains; a tree model takes Saha or Cholesky");
    }
  }
  checkPositive(o.t_end, "t_end");
  if (o.sample_times.empty()) {
    checkPositive(o.dt_out, "dt_out");
    if (o.t_end / o.dt_out > 1e9) bad("dt_out", "gives more than 1e9 samples up to t_end");
  } else {
    for (std::size_t k = 0; k < o.sample_times.size(); ++k) {
      const double t = o.sample_times[k];
      const std::string field = "sample_times[" + std::to_string(k) + "]";
      if (!(std::isfinite(t) && t >= 0.0 && t <= o.t_end)) {
        bad(field, "is " + detail::formatNumber17(t) +
                       ", expected a time in [0, t_end = " + detail::formatNumber17(o.t_end) + "]");
      }
      if (k > 0 && !(t > o.sample_times[k - 1]))
        bad(field, "is " + detail::formatNumber17(t) + ", expected strictly increasing times");
    }
  }
  if (o.integrator == Integrator::RK4) {
    checkPositive(o.step, "step");
  } else if (o.integrator == Integrator::DormandPrince45) {
    checkPositive(o.rtol, "rtol");
    checkPositive(o.atol, "atol");
    if (!(std::isfinite(o.initial_step) && o.initial_step >= 0.0)) {
      bad("initial_step", "is " + detail::formatNumber17(o.initial_step) + ", expected >= 0 (0: automatic)");
    }
    checkPositive(o.min_step, "min_step");
    if (!(o.max_step > 0.0)) bad("max_step", "is " + detail::formatNumber17(o.max_step) + ", expected > 0");
    if (!(o.max_step >= o.min_step)) bad("max_step", "is below min_step");
    if (!(o.safety > 0.0 && o.safety <= 1.0))
      bad("safety", "is " + detail::formatNumber17(o.safety) + ", expected in (0, 1]");
    if (!(o.min_factor > 0.0 && o.min_factor < 1.0)) {
      bad("min_factor", "is " + detail::formatNumber17(o.min_factor) + ", expected in (0, 1)");
    }
    if (!(std::isfinite(o.max_factor) && o.max_factor > 1.0)) {
      bad("max_factor", "is " + detail::formatNumber17(o.max_factor) + ", expected a finite number > 1");
    }
  } else {
    bad("integrator", "is unknown");
  }
  checkRoute(o.route, "simulate");
  if (o.max_steps <= 0) bad("max_steps", "is " + std::to_string(o.max_steps) + ", expected > 0");
  if (o.torque.kind() != TorqueInput::Kind::Zero) {
    if (o.torque.size() != n) {
      bad("torque", "has " + std::to_string(o.torque.size()) + " entries per vector, expected " +
                        std::to_string(n) + " (one per joint)");
    }
  }
  if (o.damping.size() != 0) {
    checkVec(o.damping, n, "damping");
    for (Eigen::Index i = 0; i < n; ++i) {
      if (o.damping[i] < 0.0) bad("damping[" + std::to_string(i) + "]", "is negative, expected >= 0");
    }
  }
}

std::size_t sampleCount(const SimulationOptions& options) { return SampleTimes(options).count; }

// ------------------------------------------------------------------------------------------- simulator

Simulator::Simulator(std::shared_ptr<const Model> model)
    : owner_(std::move(model)),
      model_(owner_.get()),
      data_(owner_ ? *owner_ : throw std::invalid_argument("Simulator: null model")) {
  n_ = model_->n;
  nq_ = model_->nq;
  nv_ = model_->nv;
  y_ = Eigen::VectorXd::Zero(nq_ + nv_);
  // Dormand-Prince's coordinates: a serial chain's state y_ itself (2n), a tree's (dq, v) in the chart (2nv)
  const Eigen::Index m = model_->serial ? nq_ + nv_ : 2 * nv_;
  if (!model_->serial) z_ = Eigen::VectorXd::Zero(m);
  for (Eigen::VectorXd* v : {&z_new_, &z_tmp_, &z_err_, &k1_, &k2_, &k3_, &k4_, &k5_, &k6_, &k7_}) {
    *v = Eigen::VectorXd::Zero(m);
  }
  tau_ = Eigen::VectorXd::Zero(nv_);  // a tree's: [0 (the root, unactuated); joint torques]
  if (model_->serial) {
    fixed_ = FixedStepWork(n_);
  } else {
    manifold_ = ManifoldStepWork(nq_, nv_);
  }
}

Simulator::Simulator(const Model& model)
    : Simulator(std::shared_ptr<const Model>(std::shared_ptr<const Model>(), &model)) {}

bool Simulator::rhs(double t, const Eigen::Ref<const Eigen::VectorXd>& y, Eigen::VectorXd& dy) {
  // a (trial) state beyond the range the dynamics accept is a failed evaluation, as a non-finite one is
  if (!detail::withinRange(y.data(), n_, kMaxPosition) ||
      !detail::withinRange(y.data() + n_, n_, kMaxStateValue))
    return false;
  const auto q = y.head(n_);
  const auto qd = y.tail(n_);
  opt_->torque.evaluate(t, tau_);
  if (has_damping_) tau_ -= opt_->damping.cwiseProduct(qd);
  if (!detail::withinRange(tau_.data(), n_, kMaxStateValue)) return false;
  const Eigen::VectorXd& qdd = forwardDynamics(*model_, data_, opt_->route, q, qd, tau_);
  ++stats_.evaluations;
  dy.head(n_) = qd;
  dy.tail(n_) = qdd;
  return dy.allFinite();
}

bool Simulator::accelTree(double t, const Eigen::Ref<const Eigen::VectorXd>& q,
                          const Eigen::Ref<const Eigen::VectorXd>& v, Eigen::VectorXd& a) {
  if (!detail::withinRange(q.data(), nq_, kMaxPosition) ||
      !detail::withinRange(v.data(), nv_, kMaxStateValue))
    return false;
  const int nr = model_->nr;
  auto tau = tau_.tail(n_);
  tau_.head(nr).setZero();
  opt_->torque.evaluate(t, tau);
  if (has_damping_) tau -= opt_->damping.cwiseProduct(v.tail(n_));
  if (!detail::withinRange(tau_.data(), nv_, kMaxStateValue)) return false;
  a = forwardDynamics(*model_, data_, opt_->route, q, v, tau_);
  ++stats_.evaluations;
  return a.allFinite();
}

bool Simulator::dopriSlope(double t, const Eigen::Ref<const Eigen::VectorXd>& z, Eigen::VectorXd& k) {
  if (model_->serial) return rhs(t, z, k);
  // a tree: z = (dq, v) in the chart at q = y_.head(nq) (manifold_step.hpp), k = (Phi(dq, v), a) with a at
  // the configuration G(q, dq)
  detail::integrateChart(*model_, y_.data(), z.data(), manifold_.qs.data());
  if (!accelTree(t, manifold_.qs, z.tail(nv_), manifold_.a)) return false;
  detail::chartVelocity(*model_, z.data(), z.data() + nv_, k.data());
  k.tail(nv_) = manifold_.a;
  return true;
}

void Simulator::moveChart() {
  // y_ = (G(q, dq), v) and the new chart starts there: dq = 0, whose chart velocity Phi(0, v) is v; the
  // acceleration of k1_ (the last stage's, FSAL) was taken at this very configuration and velocity
  detail::integrateChart(*model_, y_.data(), z_.data(), y_.data());
  y_.tail(nv_) = z_.tail(nv_);
  z_.head(nv_).setZero();
  detail::chartVelocity(*model_, z_.data(), z_.data() + nv_, k1_.data());
}

void Simulator::countStep() {
  const std::int64_t taken = stats_.steps + stats_.rejected;
  if (opt_->stop && taken % kSimulationStopPoll == 0 && opt_->stop->stopRequested()) {
    stats_.stopped_early = true;
    const std::string unit = "samples (" + std::to_string(taken) + " steps)";
    opt_->stop->raise("simulate", stats_.samples, sample_count_, unit.c_str());
  }
  if (taken >= opt_->max_steps) {
    throw DivergenceError("simulate: max_steps (" + std::to_string(opt_->max_steps) +
                          ") exceeded at t = " + detail::formatNumber17(t_));
  }
}

void Simulator::advanceRK4(double t_target) {
  const double t0 = t_;
  const double span = t_target - t0;
  if (!(span > 0.0)) return;
  // the step count in double first: span / step may exceed every integer (a step of 1e-300), and then the
  // run goes on until max_steps stops it
  const double count = std::ceil(span / opt_->step - 1e-9);
  const auto m = count >= 9.0e18 ? std::numeric_limits<std::int64_t>::max()
                                 : std::max<std::int64_t>(1, static_cast<std::int64_t>(count));
  const double h = span / static_cast<double>(m);
  const auto slope = [this](int, double t, const detail::StateRef& y, Eigen::VectorXd& k) {
    return rhs(t, y, k);
  };
  const auto accel = [this](int, double t, const detail::StateRef& q, const detail::StateRef& v,
                            Eigen::VectorXd& a) { return accelTree(t, q, v, a); };
  const bool serial = model_->serial;
  for (std::int64_t j = 0; j < m; ++j) {
    countStep();
    const bool ok = serial ? detail::fixedStep(StepScheme::RK4, t_, h, y_, y_, fixed_, slope)
                           : detail::manifoldStep(*model_, StepScheme::RK4, t_, h, y_, y_, manifold_, accel);
    if (!ok) {
      throw DivergenceError("simulate: the state became non-finite or left the accepted range near t = " +
                            detail::formatNumber17(t_));
    }
    ++stats_.steps;
    t_ = j + 1 == m ? t_target : t0 + static_cast<double>(j + 1) * h;
  }
}

double Simulator::errorNorm(const Eigen::VectorXd& z) const {
  double sum = 0.0;
  for (Eigen::Index i = 0; i < z.size(); ++i) {
    const double sc = opt_->atol + opt_->rtol * std::max(std::abs(z[i]), std::abs(z_new_[i]));
    const double r = z_err_[i] / sc;
    sum += r * r;
  }
  return std::sqrt(sum / static_cast<double>(z.size()));
}

void Simulator::initialStepDOPRI() {
  // Hairer, Norsett and Wanner, Solving ODEs I, section II.4: h0 from the sizes of y and f(y), refined
  // with one explicit Euler step's change of f. k1_ holds f(t, y) (Dormand-Prince's coordinates z).
  const Eigen::VectorXd& z = dopriState();
  const auto norm = [&](const Eigen::VectorXd& v) {
    double s = 0.0;
    for (Eigen::Index i = 0; i < v.size(); ++i) {
      const double r = v[i] / (opt_->atol + opt_->rtol * std::abs(z[i]));
      s += r * r;
    }
    return std::sqrt(s / static_cast<double>(v.size()));
  };
  const double d0 = norm(z);
  const double d1 = norm(k1_);
  double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
  h0 = std::min(h0, opt_->max_step);
  z_tmp_ = z + h0 * k1_;
  double h1;
  if (dopriSlope(t_ + h0, z_tmp_, k2_)) {
    k3_ = k2_ - k1_;
    const double d2 = norm(k3_) / h0;
    const double dm = std::max(d1, d2);
    h1 = dm <= 1e-15 ? std::max(1e-6, h0 * 1e-3) : std::pow(0.01 / dm, 1.0 / 5.0);
  } else {
    h1 = h0 * 1e-3;
  }
  h_ = std::clamp(std::min(100.0 * h0, h1), opt_->min_step, opt_->max_step);
}

void Simulator::advanceDOPRI(double t_target) {
  const SimulationOptions& o = *opt_;
  Eigen::VectorXd& z = dopriState();
  while (t_ < t_target) {
    countStep();
    double h = std::min(h_, o.max_step);
    bool clamped = false;
    if (t_ + 1.01 * h >= t_target) {  // land on the output time (no sliver step after it)
      h = t_target - t_;
      clamped = true;
    }
    // k1_ = f(t, z) from the previous step (FSAL)
    bool ok = true;
    z_tmp_ = z + (h * a21) * k1_;
    ok = ok && dopriSlope(t_ + c2 * h, z_tmp_, k2_);
    z_tmp_ = z + h * (a31 * k1_ + a32 * k2_);
    ok = ok && dopriSlope(t_ + c3 * h, z_tmp_, k3_);
    z_tmp_ = z + h * (a41 * k1_ + a42 * k2_ + a43 * k3_);
    ok = ok && dopriSlope(t_ + c4 * h, z_tmp_, k4_);
    z_tmp_ = z + h * (a51 * k1_ + a52 * k2_ + a53 * k3_ + a54 * k4_);
    ok = ok && dopriSlope(t_ + c5 * h, z_tmp_, k5_);
    z_tmp_ = z + h * (a61 * k1_ + a62 * k2_ + a63 * k3_ + a64 * k4_ + a65 * k5_);
    ok = ok && dopriSlope(t_ + h, z_tmp_, k6_);
    z_new_ = z + h * (a71 * k1_ + a73 * k3_ + a74 * k4_ + a75 * k5_ + a76 * k6_);
    ok = ok && dopriSlope(t_ + h, z_new_, k7_);
    double err = std::numeric_limits<double>::infinity();
    if (ok) {
      z_err_ = h * (e1 * k1_ + e3 * k3_ + e4 * k4_ + e5 * k5_ + e6 * k6_ + e7 * k7_);
      err = errorNorm(z);
      if (!std::isfinite(err)) err = std::numeric_limits<double>::infinity();
    }
    const double factor = err == 0.0 ? o.max_factor : o.safety * std::pow(err, -0.2);
    if (err <= 1.0) {
      t_ = clamped ? t_target : t_ + h;
      z.swap(z_new_);
      k1_.swap(k7_);  // FSAL
      if (!model_->serial) moveChart();
      ++stats_.steps;
      const double h_next = h * std::clamp(factor, o.min_factor, last_rejected_ ? 1.0 : o.max_factor);
      // a step shortened to reach an output time does not shrink the next one
      h_ = std::min(clamped ? std::max(h_next, h_) : h_next, o.max_step);
      last_rejected_ = false;
    } else {
      ++stats_.rejected;
      last_rejected_ = true;
      h_ = h * std::clamp(factor, o.min_factor, 1.0);
      if (h_ < o.min_step) {
        throw DivergenceError("simulate: the step size fell below min_step (" +
                              detail::formatNumber17(o.min_step) + ") at t = " + detail::formatNumber17(t_) +
                              (ok ? "" : " (the state became non-finite)"));
      }
    }
  }
}

void Simulator::start(const Eigen::Ref<const Eigen::VectorXd>& q0,
                      const Eigen::Ref<const Eigen::VectorXd>& qd0, const SimulationOptions& options) {
  opt_ = nullptr;
  validateSimulation(*model_, q0, qd0, options);
  opt_ = &options;
  has_damping_ = options.damping.size() != 0;
  stats_ = SimulationStats{};
  t_ = 0.0;
  last_rejected_ = false;
  next_sample_ = 0;
  sample_count_ = SampleTimes(options).count;
  y_.head(nq_) = q0;
  y_.tail(nv_) = qd0;
  if (!model_->serial) {  // Dormand-Prince's chart at q0: dq = 0
    z_.head(nv_).setZero();
    z_.tail(nv_) = qd0;
  }
  try {
    if (options.integrator == Integrator::DormandPrince45) {
      integrating(t_, [&] {
        if (!dopriSlope(t_, dopriState(), k1_))
          throw DivergenceError("simulate: non-finite accelerations at t = 0");
        if (options.initial_step > 0.0) {
          h_ = std::min(options.initial_step, options.max_step);
        } else {
          initialStepDOPRI();
        }
      });
    }
  } catch (...) {
    opt_ = nullptr;
    throw;
  }
}

bool Simulator::advance(std::size_t max_samples, const SampleCallback& on_sample) {
  if (!opt_) return false;
  // the run ends here, however it ends, unless samples remain
  struct End {
    const SimulationOptions*& p;
    bool more = false;
    ~End() {
      if (!more) p = nullptr;
    }
  } end{opt_};
  const SimulationOptions& options = *opt_;
  const SampleTimes times(options);
  for (std::size_t delivered = 0; delivered < max_samples && next_sample_ < sample_count_; ++delivered) {
    const std::size_t k = next_sample_;
    const double ts = times[k];
    integrating(t_, [&] {
      if (options.integrator == Integrator::RK4) {
        advanceRK4(ts);
      } else {
        advanceDOPRI(ts);
      }
    });
    double kinetic = 0.0, potential = 0.0;
    const double energy = mechanicalEnergy(*model_, data_, y_.head(nq_), y_.tail(nv_), kinetic, potential);
    const Sample sample{k, ts, y_.head(nq_), y_.tail(nv_), kinetic, potential, energy};
    ++next_sample_;
    ++stats_.samples;
    stats_.t_final = ts;
    if (on_sample && !on_sample(sample)) {
      stats_.stopped_early = true;
      return false;
    }
  }
  end.more = next_sample_ < sample_count_;
  return end.more;
}

SimulationStats Simulator::run(const Eigen::Ref<const Eigen::VectorXd>& q0,
                               const Eigen::Ref<const Eigen::VectorXd>& qd0, const SimulationOptions& options,
                               const SampleCallback& on_sample) {
  start(q0, qd0, options);
  advance(sample_count_, on_sample);
  return stats_;
}

SimulationResult Simulator::simulate(const Eigen::Ref<const Eigen::VectorXd>& q0,
                                     const Eigen::Ref<const Eigen::VectorXd>& qd0,
                                     const SimulationOptions& options) {
  validateSimulation(*model_, q0, qd0, options);
  const auto rows = static_cast<Eigen::Index>(sampleCount(options));
  SimulationResult r;
  r.t.resize(rows);
  r.q.resize(rows, nq_);
  r.qd.resize(rows, nv_);
  r.kinetic.resize(rows);
  r.potential.resize(rows);
  r.energy.resize(rows);
  r.stats = run(q0, qd0, options, [&r](const Sample& s) {
    const auto k = static_cast<Eigen::Index>(s.index);
    r.t[k] = s.t;
    r.q.row(k) = s.q.transpose();
    r.qd.row(k) = s.qd.transpose();
    r.kinetic[k] = s.kinetic;
    r.potential[k] = s.potential;
    r.energy[k] = s.energy;
    return true;
  });
  return r;
}

SimulationResult simulate(const Model& model, const Eigen::Ref<const Eigen::VectorXd>& q0,
                          const Eigen::Ref<const Eigen::VectorXd>& qd0, const SimulationOptions& options) {
  Simulator sim(model);
  return sim.simulate(q0, qd0, options);
}

}  // namespace denoc
