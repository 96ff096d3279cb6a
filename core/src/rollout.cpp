#include "denoc/rollout.hpp"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "denoc/algorithm/forward_dynamics.hpp"
#include "denoc/algorithm/forward_dynamics_derivatives.hpp"

namespace denoc {

namespace {

using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using VecMap = Eigen::Map<Eigen::VectorXd>;
using ConstVecMap = Eigen::Map<const Eigen::VectorXd>;

std::string num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

/// "q[i]" or "qd[i - n]" for entry i of a state.
std::string stateEntry(int i, int n) {
  return i < n ? "q[" + std::to_string(i) + "]" : "qd[" + std::to_string(i - n) + "]";
}

void checkOptions(const char* fn, const RolloutOptions& o) {
  if (!(std::isfinite(o.step) && o.step > 0.0)) {
    throw std::invalid_argument(std::string(fn) + ": step is " + num(o.step) +
                                ", expected a positive finite number");
  }
  if (o.scheme != StepScheme::SemiImplicitEuler && o.scheme != StepScheme::RK4) {
    throw std::invalid_argument(std::string(fn) + ": scheme " + std::to_string(static_cast<int>(o.scheme)) +
                                " is not a step scheme");
  }
}

/// Checks rollout k's initial state (2n) and, when u is not null, its T x n torques.
void checkInputs(const char* fn, int n, std::size_t steps, std::size_t k, const double* x0, const double* u) {
  const auto who = [&] { return std::string(fn) + ": rollout " + std::to_string(k) + ": "; };
  for (int i = 0; i < 2 * n; ++i) {
    if (!std::isfinite(x0[i])) {
      throw std::invalid_argument(who() + "x0[" + std::to_string(i) + "] (" + stateEntry(i, n) + ") is " +
                                  num(x0[i]) + ", expected a finite number");
    }
  }
  if (!u) return;
  const std::size_t count = steps * static_cast<std::size_t>(n);
  double acc = 0.0;  // x - x is 0 for a finite x and NaN otherwise: one branch for the whole sequence
  for (std::size_t e = 0; e < count; ++e) acc += u[e] - u[e];
  if (acc == 0.0) return;
  for (std::size_t e = 0; e < count; ++e) {
    if (!std::isfinite(u[e])) {
      throw std::invalid_argument(who() + "u at step " + std::to_string(e / static_cast<std::size_t>(n)) +
                                  ", joint " + std::to_string(e % static_cast<std::size_t>(n)) + " is " +
                                  num(u[e]) + ", expected a finite number");
    }
  }
}

/// The steps of one rollout on one workspace (arguments checked).
class Stepper {
 public:
  Stepper(const Model& model, Data& data, const RolloutOptions& options)
      : model_(model), data_(data), o_(options), n_(model.n), N_(2 * model.n) {}

  /// Runs the rollout; `poll` is called before every step with the step index.
  template <typename Poll>
  void run(const double* x0, const double* u, double* states, double* A, double* B, std::size_t index,
           const Poll& poll) {
    const bool linearize = A || B;
    VecMap(states, N_) = ConstVecMap(x0, N_);
    for (std::size_t t = 0; t < o_.steps; ++t) {
      poll(t);
      const std::size_t NN = static_cast<std::size_t>(N_) * static_cast<std::size_t>(N_);
      const std::size_t Nn = static_cast<std::size_t>(N_) * static_cast<std::size_t>(n_);
      const ConstVecMap ut(u + t * static_cast<std::size_t>(n_), n_);
      const ConstVecMap x(states + t * static_cast<std::size_t>(N_), N_);
      VecMap xn(states + (t + 1) * static_cast<std::size_t>(N_), N_);
      double* At = A ? A + t * NN : nullptr;
      double* Bt = B ? B + t * Nn : nullptr;
      if (o_.scheme == StepScheme::RK4) {
        stepRK4(x, ut, xn, linearize, At, Bt);
      } else {
        stepEuler(x, ut, xn, linearize, At, Bt);
      }
      check(xn, At, Bt, index, t);
    }
  }

 private:
  /// qdd at (q, qd) = x_s into data.qdd, and with derivatives dqdd/dq, dqdd/dqd, I^-1 into data.
  void evaluate(const Eigen::Ref<const Eigen::VectorXd>& xs, const ConstVecMap& u, bool derivatives) {
    if (derivatives) {
      detail::abaDerivatives<double>(model_, data_, xs.head(n_), xs.tail(n_), u, nullptr);
    } else {
      detail::forwardDynamicsSaha<double>(model_, data_, xs.head(n_), xs.tail(n_), u);
    }
  }

  void stepEuler(const ConstVecMap& x, const ConstVecMap& u, VecMap& xn, bool linearize, double* A,
                 double* B) {
    const int n = n_;
    const double h = o_.step;
    evaluate(x, u, linearize);
    xn.tail(n) = x.tail(n) + h * data_.qdd;
    xn.head(n) = x.head(n) + h * xn.tail(n);
    if (A) {
      // [[1 + h^2 Fq, h 1 + h^2 Fv], [h Fq, 1 + h Fv]]
      Eigen::Map<RowMajor> Am(A, 2 * n, 2 * n);
      Am.bottomLeftCorner(n, n) = h * data_.dqdd_dq;
      Am.bottomRightCorner(n, n) = h * data_.dqdd_dqd;
      Am.bottomRightCorner(n, n).diagonal().array() += 1.0;
      Am.topLeftCorner(n, n) = h * Am.bottomLeftCorner(n, n);
      Am.topLeftCorner(n, n).diagonal().array() += 1.0;
      Am.topRightCorner(n, n) = h * Am.bottomRightCorner(n, n);
    }
    if (B) {
      // [h^2 I^-1; h I^-1]
      Eigen::Map<RowMajor> Bm(B, 2 * n, n);
      Bm.bottomRows(n) = h * data_.Minv;
      Bm.topRows(n) = h * Bm.bottomRows(n);
    }
  }

  // RK4 as the Simulator computes it (simulate.cpp, advanceRK4): k1 = f(x), k2 = f(x + h/2 k1),
  // k3 = f(x + h/2 k2), k4 = f(x + h k3), x+ = x + h/6 (k1 + 2 k2 + 2 k3 + k4), with f(x) = [qd; FD(q, qd,
  // u)]. Linearization: with J_s = [[0, 1], [Fq_s, Fv_s]] at stage s, D_s = d x_s / d x and E_s = d x_s / d
  // u,
  //   d k_s / d x = J_s D_s,   d k_s / d u = J_s E_s + [0; I^-1_s],   D_1 = 1, E_1 = 0,
  //   D_{s+1} = 1 + c_{s+1} d k_s / d x,   E_{s+1} = c_{s+1} d k_s / d u,
  //   A = 1 + sum_s w_s d k_s / d x,   B = sum_s w_s d k_s / d u      (c = h/2, h/2, h; w = h/6 (1, 2, 2,
  //   1)).
  // The top half of d k_s is the bottom half of D_s (E_s); only the bottom half is a product.
  void stepRK4(const ConstVecMap& x, const ConstVecMap& u, VecMap& xn, bool linearize, double* A, double* B) {
    const int n = n_, N = N_;
    const double h = o_.step;
    const double c[4] = {0.0, 0.5 * h, 0.5 * h, h};
    const double w[4] = {h / 6.0, h / 3.0, h / 3.0, h / 6.0};
    Eigen::VectorXd& xs = data_.ro_xs;
    Eigen::VectorXd& k = data_.ro_k;
    Eigen::VectorXd& ksum = data_.ro_ksum;
    Eigen::MatrixXd& D = data_.ro_D;
    Eigen::MatrixXd& E = data_.ro_E;
    Eigen::MatrixXd& W = data_.ro_W;
    const Eigen::MatrixXd& Fq = data_.dqdd_dq;
    const Eigen::MatrixXd& Fv = data_.dqdd_dqd;
    const Eigen::MatrixXd& Minv = data_.Minv;
    Eigen::Map<RowMajor> Am(A, A ? N : 0, A ? N : 0);
    Eigen::Map<RowMajor> Bm(B, B ? N : 0, B ? n : 0);
    for (int s = 0; s < 4; ++s) {
      // the stage's state and slope
      if (s == 0) {
        evaluate(x, u, linearize);
        k.head(n) = x.tail(n);
      } else {
        xs = x + c[s] * k;
        evaluate(xs, u, linearize);
        k.head(n) = xs.tail(n);
      }
      k.tail(n) = data_.qdd;
      // k1 + 2 k2 + 2 k3 + k4, summed in the Simulator's order
      if (s == 0) {
        ksum = k;
      } else if (s < 3) {
        ksum = ksum + 2.0 * k;
      } else {
        ksum = ksum + k;
      }
      if (!linearize) continue;
      if (A) {
        if (s == 0) {
          // D_1 = 1: d k_1 / d x = J_1
          Am.setIdentity();
          Am.topRightCorner(n, n).diagonal().array() += w[0];
          Am.bottomLeftCorner(n, n) += w[0] * Fq;
          Am.bottomRightCorner(n, n) += w[0] * Fv;
          D.topRows(n).setZero();
          D.topLeftCorner(n, n).setIdentity();
          D.topRightCorner(n, n).diagonal().setConstant(c[1]);
          D.bottomLeftCorner(n, n) = c[1] * Fq;
          D.bottomRightCorner(n, n) = c[1] * Fv;
          D.bottomRightCorner(n, n).diagonal().array() += 1.0;
        } else {
          W.noalias() = Fq.lazyProduct(D.topRows(n));
          W.noalias() += Fv.lazyProduct(D.bottomRows(n));
          Am.topRows(n) += w[s] * D.bottomRows(n);
          Am.bottomRows(n) += w[s] * W;
          if (s < 3) {
            D.topRows(n) = c[s + 1] * D.bottomRows(n);
            D.topLeftCorner(n, n).diagonal().array() += 1.0;
            D.bottomRows(n) = c[s + 1] * W;
            D.bottomRightCorner(n, n).diagonal().array() += 1.0;
          }
        }
      }
      if (B) {
        if (s == 0) {
          // E_1 = 0: d k_1 / d u = [0; I^-1]
          Bm.setZero();
          Bm.bottomRows(n) = w[0] * Minv;
          E.topRows(n).setZero();
          E.bottomRows(n) = c[1] * Minv;
        } else {
          auto Wu = W.leftCols(n);
          Wu.noalias() = Fq.lazyProduct(E.topRows(n));
          Wu.noalias() += Fv.lazyProduct(E.bottomRows(n));
          Wu += Minv;
          Bm.topRows(n) += w[s] * E.bottomRows(n);
          Bm.bottomRows(n) += w[s] * Wu;
          if (s < 3) {
            E.topRows(n) = c[s + 1] * E.bottomRows(n);
            E.bottomRows(n) = c[s + 1] * Wu;
          }
        }
      }
    }
    xn = x + (h / 6.0) * ksum;
  }

  /// NumericalError when the new state (or the step's linearization) is not finite.
  void check(const VecMap& xn, const double* A, const double* B, std::size_t index, std::size_t t) const {
    double acc = 0.0;
    for (int i = 0; i < N_; ++i) acc += xn[i] - xn[i];
    if (acc != 0.0) {
      for (int i = 0; i < N_; ++i) {
        if (!std::isfinite(xn[i])) {
          throw NumericalError("rollout " + std::to_string(index) + ", step " + std::to_string(t) + ": " +
                               stateEntry(i, n_) + " is " + num(xn[i]) +
                               " (the state left double precision; a shorter step may help)");
        }
      }
    }
    const auto finite = [](const double* m, std::size_t size) {
      double a = 0.0;
      for (std::size_t e = 0; e < size; ++e) a += m[e] - m[e];
      return a == 0.0;
    };
    const auto N = static_cast<std::size_t>(N_);
    if ((A && !finite(A, N * N)) || (B && !finite(B, N * static_cast<std::size_t>(n_)))) {
      throw NumericalError("rollout " + std::to_string(index) + ", step " + std::to_string(t) +
                           ": the linearization has a non-finite entry");
    }
  }

  const Model& model_;
  Data& data_;
  const RolloutOptions& o_;
  int n_, N_;
};

}  // namespace

void rollout(const Model& model, Data& data, const RolloutOptions& options, const double* x0, const double* u,
             double* states, double* A, double* B, const StopCondition* stop) {
  checkOptions("rollout", options);
  if (!x0 || !states || (options.steps > 0 && !u)) {
    throw std::invalid_argument("rollout: x0, u and states must not be null");
  }
  checkInputs("rollout", model.n, options.steps, 0, x0, u);
  detail::checkData(model, data, "rollout");
  Stepper stepper(model, data, options);
  stepper.run(x0, u, states, A, B, 0, [&](std::size_t t) {
    if (stop && stop->stopRequested()) stop->raise("rollout", t, options.steps, "steps");
  });
}

void rolloutBatch(BatchPool& pool, const std::shared_ptr<const Model>& model, const RolloutOptions& options,
                  const RolloutArrays& arrays, const StopCondition* stop, std::size_t grain) {
  constexpr const char* fn = "rolloutBatch";
  checkOptions(fn, options);
  if (!model) throw std::invalid_argument("rolloutBatch: model is null");
  const int n = model->n;
  const auto N = static_cast<std::size_t>(2 * n);
  const std::size_t T = options.steps;
  const std::size_t un = T * static_cast<std::size_t>(n);
  if (arrays.count > 0 && (!arrays.x0 || !arrays.states || (T > 0 && !arrays.u))) {
    throw std::invalid_argument("rolloutBatch: x0, u and states must not be null");
  }
  for (std::size_t k = 0; k < arrays.count; ++k) {
    const double* u = arrays.shared_controls ? (k == 0 ? arrays.u : nullptr) : arrays.u + k * un;
    checkInputs(fn, n, T, k, arrays.x0 + k * N, u);
  }
  std::atomic<std::size_t> completed{0};
  pool.run(model, arrays.count, grain == 0 ? 1 : grain, [&](std::size_t begin, std::size_t end, Data& data) {
    Stepper stepper(*model, data, options);
    for (std::size_t k = begin; k < end; ++k) {
      const double* u = arrays.shared_controls ? arrays.u : arrays.u + k * un;
      double* A = arrays.A ? arrays.A + k * T * N * N : nullptr;
      double* B = arrays.B ? arrays.B + k * T * N * static_cast<std::size_t>(n) : nullptr;
      stepper.run(arrays.x0 + k * N, u, arrays.states + k * (T + 1) * N, A, B, k, [&](std::size_t) {
        if (stop && stop->stopRequested()) stop->raise(fn, completed.load(), arrays.count, "rollouts");
      });
      completed.fetch_add(1, std::memory_order_relaxed);
    }
  });
}

}  // namespace denoc
