#include "denoc/rollout.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <stdexcept>
#include <string>

#include "batch_engine.hpp"
#include "denoc/algorithm/check.hpp"
#include "denoc/algorithm/forward_dynamics.hpp"
#include "denoc/algorithm/forward_dynamics_derivatives.hpp"
#include "denoc/algorithm/tree.hpp"
#include "denoc/algorithm/tree_derivatives.hpp"
#include "denoc/algorithm/tree_local.hpp"
#include "fixed_step.hpp"
#include "format.hpp"
#include "manifold_step.hpp"

namespace denoc {

namespace {

using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using VecMap = Eigen::Map<Eigen::VectorXd>;
using ConstVecMap = Eigen::Map<const Eigen::VectorXd>;

/// "q[i]" or "qd[i - n]" for entry i of a serial chain's state; "q[i]" or "v[i - nq]" for a tree model's.
std::string stateEntry(const Model& model, int i) {
  const int nq = model.nq;
  return i < nq ? "q[" + std::to_string(i) + "]"
                : (model.serial ? "qd[" : "v[") + std::to_string(i - nq) + "]";
}

void checkOptions(const char* fn, const RolloutOptions& o) {
  if (!(std::isfinite(o.step) && o.step > 0.0)) {
    throw std::invalid_argument(std::string(fn) + ": step is " + detail::formatNumber17(o.step) +
                                ", expected a positive finite number");
  }
  if (o.scheme != StepScheme::SemiImplicitEuler && o.scheme != StepScheme::RK4) {
    throw std::invalid_argument(std::string(fn) + ": scheme " + std::to_string(static_cast<int>(o.scheme)) +
                                " is not a step scheme");
  }
}

/// Checks rollout k's initial state (nq + nv) and, when u is not null, its T x nu torques.
void checkInputs(const char* fn, const Model& model, std::size_t steps, std::size_t k, const double* x0,
                 const double* u) {
  const auto who = [&] { return std::string(fn) + ": rollout " + std::to_string(k) + ": "; };
  const int n = model.nu;
  for (int i = 0; i < model.nq + model.nv; ++i) {
    if (!std::isfinite(x0[i])) {
      throw std::invalid_argument(who() + "x0[" + std::to_string(i) + "] (" + stateEntry(model, i) + ") is " +
                                  detail::formatNumber17(x0[i]) + ", expected a finite number");
    }
  }
  if (model.root == RootJoint::Floating) {
    const double norm = detail::quaternionNorm(x0[3], x0[4], x0[5], x0[6]);
    if (!detail::quaternionNormAccepted(norm)) {
      throw std::invalid_argument(who() + "x0[3..7), the root's quaternion, has norm " +
                                  detail::formatNumber17(norm) + ", expected 1 within " +
                                  detail::formatNumber17(kQuaternionTolerance));
    }
  }
  if (!u) return;
  const std::size_t count = steps * static_cast<std::size_t>(n);
  // one branch for the whole sequence
  if (detail::allFinite(u, static_cast<Eigen::Index>(count))) return;
  for (std::size_t e = 0; e < count; ++e) {
    if (!std::isfinite(u[e])) {
      throw std::invalid_argument(who() + "u at step " + std::to_string(e / static_cast<std::size_t>(n)) +
                                  ", joint " + std::to_string(e % static_cast<std::size_t>(n)) + " is " +
                                  detail::formatNumber17(u[e]) + ", expected a finite number");
    }
  }
}

/// The steps of one rollout on one workspace (arguments checked).
class Stepper {
 public:
  Stepper(const Model& model, Data& data, RolloutScratch& scratch, const RolloutOptions& options)
      : model_(model),
        data_(data),
        w_(scratch),
        o_(options),
        n_(model.nu),
        N_(model.nq + model.nv),
        L_(2 * model.nv) {}

  /// The external wrenches of the next runs (checked; held constant over every step), count 0 for none.
  void setWrenches(const ExternalWrench* wrenches, int count) {
    ws_ = wrenches;
    nw_ = count;
  }

  /// Runs the rollout; `poll` is called before every step with the step index.
  template <typename Poll>
  void run(const double* x0, const double* u, double* states, double* A, double* B, std::size_t index,
           const Poll& poll) {
    const bool linearize = A || B;
    VecMap(states, N_) = ConstVecMap(x0, N_);
    const std::size_t NN = static_cast<std::size_t>(L_) * static_cast<std::size_t>(L_);
    const std::size_t Nn = static_cast<std::size_t>(L_) * static_cast<std::size_t>(n_);
    for (std::size_t t = 0; t < o_.steps; ++t) {
      poll(t);
      const ConstVecMap ut(u + t * static_cast<std::size_t>(n_), n_);
      const ConstVecMap x(states + t * static_cast<std::size_t>(N_), N_);
      VecMap xn(states + (t + 1) * static_cast<std::size_t>(N_), N_);
      if (model_.serial) {
        step(x, ut, xn, linearize, A ? A + t * NN : nullptr, B ? B + t * Nn : nullptr);
      } else {
        treeStep(x, ut, xn, linearize, A ? A + t * NN : nullptr, B ? B + t * Nn : nullptr, index, t);
      }
      check(xn, A ? A + t * NN : nullptr, B ? B + t * Nn : nullptr, index, t);
    }
  }

 private:
  /// One step of the scheme (detail::fixedStep), with the linearization through its stages when asked.
  void step(const ConstVecMap& x, const ConstVecMap& u, VecMap& xn, bool linearize, double* A, double* B) {
    const int n = n_, N = N_;
    const double h = o_.step;
    // RK4: stage s starts at x + c[s] k_{s-1} and weighs w[s] in the sum
    const double c[4] = {0.0, 0.5 * h, 0.5 * h, h};
    const double w[4] = {h / 6.0, h / 3.0, h / 3.0, h / 6.0};
    Eigen::Map<RowMajor> Am(A, A ? N : 0, A ? N : 0);
    Eigen::Map<RowMajor> Bm(B, B ? N : 0, B ? n : 0);
    const auto slope = [&](int s, double, const detail::StateRef& xs, Eigen::VectorXd& k) {
      if (nw_ > 0) {
        // with external wrenches: the tree route, which takes them (and their q-dependence: eq. D.0)
        wrenchAccel(xs.head(n), xs.tail(n), u, linearize);
      } else if (linearize) {
        detail::abaDerivatives<double>(model_, data_, xs.head(n), xs.tail(n), u, nullptr);
      } else {
        detail::forwardDynamicsSaha<double>(model_, data_, xs.head(n), xs.tail(n), u);
      }
      k.head(n) = xs.tail(n);
      k.tail(n) = data_.qdd;
      if (linearize && o_.scheme == StepScheme::RK4) chainRK4(s, c, w, Am, Bm);
      return true;  // checked once the step is taken (check)
    };
    detail::fixedStep(o_.scheme, 0.0, h, x, xn, w_.step, slope);
    if (linearize && o_.scheme == StepScheme::SemiImplicitEuler) chainEuler(A, B);
  }

  /// One step of a tree model on its configuration manifold (detail::manifoldStep), with the linearization
  /// in the tangent space through its stages when asked.
  void treeStep(const ConstVecMap& x, const ConstVecMap& u, VecMap& xn, bool linearize, double* A, double* B,
                std::size_t index, std::size_t t) {
    const int nv = model_.nv, nr = model_.nr;
    const double h = o_.step;
    const double c[4] = {0.0, 0.5 * h, 0.5 * h, h};
    const double b[4] = {h / 6.0, h / 3.0, h / 3.0, h / 6.0};
    w_.tau.head(nr).setZero();
    w_.tau.tail(n_) = u;
    const bool rk4 = o_.scheme == StepScheme::RK4;
    const auto accel = [&](int s, double, const detail::StateRef& qs, const detail::StateRef& vs,
                           Eigen::VectorXd& a) {
      if (!detail::withinRange(qs.data(), qs.size(), kMaxPosition) ||
          !detail::withinRange(vs.data(), vs.size(), kMaxStateValue)) {
        throw DivergenceError(
            "rollout " + std::to_string(index) + ", step " + std::to_string(t) +
            ": a stage's state left the range the dynamics accept (a shorter step may help)");
      }
      try {
        wrenchAccel(qs, vs, w_.tau, linearize);
      } catch (const NumericalError& e) {
        throw DivergenceError("rollout " + std::to_string(index) + ", step " + std::to_string(t) + ": " +
                              e.what());
      }
      a = data_.qdd;
      if (linearize) chainTree(s, rk4 ? c[s] : 0.0, rk4 ? b[s] : h);
      return true;
    };
    detail::manifoldStep(model_, o_.scheme, 0.0, h, x, xn, w_.manifold, accel);
    if (!linearize) return;
    // x+ = (G(q, Xi), v + sum): Xi = h/6 sum nu_s (RK4) or h v+ (Euler), in w_.manifold.xi
    Eigen::MatrixXd& Dq = w_.Dq;  // the top rows of [A B]
    Dq = w_.DXi;
    if (model_.root == RootJoint::Floating) {
      detail::integrateJacobians(w_.manifold.xi.data(), Gq_, Gw_);
      rootProduct(Gw_, Dq);
    }
    Dq.leftCols(nv).diagonal().array() += 1.0;
    if (model_.root == RootJoint::Floating) Dq.topLeftCorner<6, 6>() += Gq_ - detail::Mat6::Identity();
    if (A) {
      Eigen::Map<RowMajor> Am(A, 2 * nv, 2 * nv);
      Am.topRows(nv) = Dq.leftCols(2 * nv);
      Am.bottomRows(nv) = w_.Dvs.leftCols(2 * nv);
      Am.bottomRightCorner(nv, nv).diagonal().array() += 1.0;
    }
    if (B) {
      Eigen::Map<RowMajor> Bm(B, 2 * nv, n_);
      Bm.topRows(nv) = Dq.rightCols(n_);
      Bm.bottomRows(nv) = w_.Dvs.rightCols(n_);
    }
  }

  /// data.qdd (and, when linearizing, dqdd/dq, dqdd/dv and I^-1) at (q, v, tau) with the external wrenches by
  /// the tree route: a tree model's stages, and a serial chain's with wrenches.
  void wrenchAccel(const detail::StateRef& q, const detail::StateRef& v, const detail::StateRef& tau,
                   bool linearize) {
    if (linearize) {
      detail::treeForwardDynamicsDerivatives<double>(model_, data_, q, v, tau, ws_, nw_,
                                                     "computeForwardDynamicsDerivatives");
    } else {
      detail::treeForwardDynamics<double>(model_, data_, q, v, tau, ws_, nw_, "forwardDynamics");
    }
  }

  /// X.topRows(6) = M X.topRows(6), without allocation.
  void rootProduct(const detail::Mat6& M, Eigen::MatrixXd& X) {
    w_.T6.noalias() = M.lazyProduct(X.topRows<6>());
    X.topRows<6>() = w_.T6;
  }

  // The chain rule of a tree model's step after the evaluation of stage s (Fq, Fv, I^-1 at that stage in
  // data; c_s its offset, b_s its weight: h for Euler). Columns [dq, dv, du] (m = 2 nv + nu); for stage s
  // at xi_s, v_s (manifold_step.hpp, M.1 and the Jacobians of G and Phi):
  //   D xi_1 = 0, D v_1 = [0 1 0];  D xi_s = c_s D nu_{s-1},  D v_s = [0 1 0] + c_s D a_{s-1},
  //   D q_s = dG/dq(xi_s) [1 0 0] + dG/domega(xi_s) D xi_s           (the tangent at q_s),
  //   D a_s = Fq_s D q_s + Fv_s D v_s + [0 0 I^-1_s[:, nr:]],
  //   D nu_s = dPhi/dxi D xi_s + dPhi/dv D v_s,
  //   D Xi = sum_s b_s D nu_s,  D v+ = [0 1 0] + sum_s b_s D a_s;  and at the end
  //   D q+ = dG/dq(Xi) [1 0 0] + dG/domega(Xi) D Xi.
  // Euler (one stage, b = h): D Xi = h D v+ (Xi = h v+, not h nu).
  void chainTree(int s, double c, double b) {
    const int nv = model_.nv, nr = model_.nr;
    const bool floating = model_.root == RootJoint::Floating;
    ManifoldStepWork& mw = w_.manifold;
    Eigen::MatrixXd &Dxi = w_.Dxi, &Dv = w_.Dv, &Dq = w_.Dq, &Da = w_.Da, &Dnu = w_.Dnu;
    if (s == 0) {
      Dxi.setZero();
      Dv.setZero();
      Dv.middleCols(nv, nv).diagonal().setConstant(1.0);
    } else {
      Dxi = c * Dnu;
      Dv = c * Da;
      Dv.middleCols(nv, nv).diagonal().array() += 1.0;
    }
    // D q_s
    Dq = Dxi;
    if (floating && s > 0) {
      detail::integrateJacobians(mw.xi.data(), Gq_, Gw_);
      rootProduct(Gw_, Dq);
    }
    Dq.leftCols(nv).diagonal().array() += 1.0;
    if (floating && s > 0) Dq.topLeftCorner<6, 6>() += Gq_ - detail::Mat6::Identity();
    // D a_s
    Da.noalias() = data_.dqdd_dq.lazyProduct(Dq);
    Da.noalias() += data_.dqdd_dqd.lazyProduct(Dv);
    Da.rightCols(n_) += data_.Minv.rightCols(nv - nr);
    const bool euler = o_.scheme == StepScheme::SemiImplicitEuler;
    if (euler) {
      // D v+ = [0 1 0] + h D a, D Xi = h D v+
      w_.Dvs = b * Da;
      w_.DXi = b * w_.Dvs;
      w_.DXi.middleCols(nv, nv).diagonal().array() += b;
      return;
    }
    // D nu_s
    Dnu = Dv;
    if (floating) {
      detail::chartVelocityJacobians(mw.xi.data(), mw.vs.data(), Px_, Pv_);
      w_.T6.noalias() = Pv_.lazyProduct(Dv.topRows<6>());
      w_.T6.noalias() += Px_.lazyProduct(Dxi.topRows<6>());
      Dnu.topRows<6>() = w_.T6;
    }
    if (s == 0) {
      w_.DXi = b * Dnu;
      w_.Dvs = b * Da;
    } else {
      w_.DXi += b * Dnu;
      w_.Dvs += b * Da;
    }
  }

  // Semi-implicit Euler: A = [[1 + h^2 Fq, h 1 + h^2 Fv], [h Fq, 1 + h Fv]], B = [h^2 I^-1; h I^-1], with
  // Fq, Fv, I^-1 at the step's start.
  void chainEuler(double* A, double* B) {
    const int n = n_;
    const double h = o_.step;
    if (A) {
      Eigen::Map<RowMajor> Am(A, 2 * n, 2 * n);
      Am.bottomLeftCorner(n, n) = h * data_.dqdd_dq;
      Am.bottomRightCorner(n, n) = h * data_.dqdd_dqd;
      Am.bottomRightCorner(n, n).diagonal().array() += 1.0;
      Am.topLeftCorner(n, n) = h * Am.bottomLeftCorner(n, n);
      Am.topLeftCorner(n, n).diagonal().array() += 1.0;
      Am.topRightCorner(n, n) = h * Am.bottomRightCorner(n, n);
    }
    if (B) {
      Eigen::Map<RowMajor> Bm(B, 2 * n, n);
      Bm.bottomRows(n) = h * data_.Minv;
      Bm.topRows(n) = h * Bm.bottomRows(n);
    }
  }

  // RK4, after the evaluation of stage s (Fq, Fv, I^-1 at that stage in data). With J_s = [[0, 1], [Fq_s,
  // Fv_s]], D_s = d x_s / d x and E_s = d x_s / d u,
  //   d k_s / d x = J_s D_s,   d k_s / d u = J_s E_s + [0; I^-1_s],   D_1 = 1, E_1 = 0,
  //   D_{s+1} = 1 + c_{s+1} d k_s / d x,   E_{s+1} = c_{s+1} d k_s / d u,
  //   A = 1 + sum_s w_s d k_s / d x,   B = sum_s w_s d k_s / d u      (c = h/2, h/2, h; w = h/6 (1, 2, 2,
  //   1)).
  // The top half of d k_s is the bottom half of D_s (E_s); only the bottom half is a product.
  void chainRK4(int s, const double (&c)[4], const double (&w)[4], Eigen::Map<RowMajor>& Am,
                Eigen::Map<RowMajor>& Bm) {
    const int n = n_;
    Eigen::MatrixXd& D = w_.D;
    Eigen::MatrixXd& E = w_.E;
    Eigen::MatrixXd& W = w_.W;
    const Eigen::MatrixXd& Fq = data_.dqdd_dq;
    const Eigen::MatrixXd& Fv = data_.dqdd_dqd;
    const Eigen::MatrixXd& Minv = data_.Minv;
    if (Am.size() != 0) {
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
    if (Bm.size() != 0) {
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

  /// DivergenceError when the new state (or the step's linearization) is not finite.
  void check(const VecMap& xn, const double* A, const double* B, std::size_t index, std::size_t t) const {
    if (!detail::allFinite(xn.data(), N_)) {
      for (int i = 0; i < N_; ++i) {
        if (!std::isfinite(xn[i])) {
          throw DivergenceError("rollout " + std::to_string(index) + ", step " + std::to_string(t) + ": " +
                                stateEntry(model_, i) + " is " + detail::formatNumber17(xn[i]) +
                                " (the state left double precision; a shorter step may help)");
        }
      }
    }
    const auto finite = [](const double* m, std::size_t size) {
      double a = 0.0;
      for (std::size_t e = 0; e < size; ++e) a += m[e] - m[e];
      return a == 0.0;
    };
    const auto L = static_cast<std::size_t>(L_);
    if ((A && !finite(A, L * L)) || (B && !finite(B, L * static_cast<std::size_t>(n_)))) {
      throw DivergenceError("rollout " + std::to_string(index) + ", step " + std::to_string(t) +
                            ": the linearization has a non-finite entry");
    }
  }

  const Model& model_;
  Data& data_;
  RolloutScratch& w_;
  const RolloutOptions& o_;
  int n_, N_, L_;                       // torques, state entries (nq + nv), tangent state entries (2 nv)
  const ExternalWrench* ws_ = nullptr;  // the external wrenches, held over the rollout
  int nw_ = 0;
  detail::Mat6 Gq_, Gw_, Px_, Pv_;  // a floating root's blocks of dG/dq, dG/domega, dPhi/dxi, dPhi/dv
};

}  // namespace

RolloutScratch::RolloutScratch(const Model& model) : RolloutScratch(model.serial ? model.n : 0) {
  if (model.serial) return;
  tree = true;
  const int nv = model.nv, m = 2 * nv + model.nu;
  manifold = ManifoldStepWork(model.nq, nv);
  tau = Eigen::VectorXd::Zero(nv);
  for (Eigen::MatrixXd* M : {&Dxi, &Dv, &Dq, &Da, &Dnu, &DXi, &Dvs}) *M = Eigen::MatrixXd::Zero(nv, m);
  T6 = Eigen::MatrixXd::Zero(6, m);
}

bool RolloutScratch::fits(const Model& model) const {
  if (model.serial) return !tree && step.k.size() == 2 * model.n;
  return tree && manifold.qs.size() == model.nq && tau.size() == model.nv &&
         Dq.cols() == 2 * model.nv + model.nu;
}

void rollout(const Model& model, RolloutWorkspace& workspace, const RolloutOptions& options, const double* x0,
             const double* u, double* states, double* A, double* B, const StopCondition* stop,
             const ExternalWrench* wrenches, int wrench_count) {
  checkOptions("rollout", options);
  if (!x0 || !states || (options.steps > 0 && !u)) {
    throw std::invalid_argument("rollout: x0, u and states must not be null");
  }
  checkInputs("rollout", model, options.steps, 0, x0, u);
  detail::checkData(model, workspace.data, "rollout", true);
  if (wrench_count < 0 || (wrench_count > 0 && !wrenches)) {
    throw std::invalid_argument("rollout: " + std::to_string(wrench_count) + " external wrenches" +
                                (wrenches ? "" : " and no array"));
  }
  detail::checkWrenches(model, wrenches, wrench_count, "rollout");
  if (!workspace.scratch.fits(model)) {
    throw std::invalid_argument("rollout: the workspace's scratch was made for another model (" +
                                std::to_string(workspace.scratch.step.k.size() / 2) + " joints" +
                                (workspace.scratch.tree ? ", a tree" : "") + "), the model has " +
                                std::to_string(model.n) + (model.serial ? "" : " (a tree)") +
                                " (make it with RolloutScratch(model))");
  }
  Stepper stepper(model, workspace.data, workspace.scratch, options);
  stepper.setWrenches(wrenches, wrench_count);
  stepper.run(x0, u, states, A, B, 0, [&](std::size_t t) {
    if (stop && stop->stopRequested()) stop->raise("rollout", t, options.steps, "steps");
  });
}

void rolloutBatch(BatchPool& pool, const std::shared_ptr<const Model>& model, const RolloutOptions& options,
                  const RolloutArrays& arrays, const BatchOptions& batch) {
  constexpr const char* fn = "rolloutBatch";
  checkOptions(fn, options);
  if (!model) throw std::invalid_argument("rolloutBatch: model is null");
  const int n = model->nu;
  const auto N = static_cast<std::size_t>(model->nq + model->nv);  // a state
  const auto L = static_cast<std::size_t>(2 * model->nv);          // a row of A

  const std::size_t T = options.steps;
  const std::size_t un = T * static_cast<std::size_t>(n);
  if (arrays.count > 0 && (!arrays.x0 || !arrays.states || (T > 0 && !arrays.u))) {
    throw std::invalid_argument("rolloutBatch: x0, u and states must not be null");
  }
  for (std::size_t k = 0; k < arrays.count; ++k) {
    const double* u = arrays.shared_controls ? (k == 0 ? arrays.u : nullptr) : arrays.u + k * un;
    checkInputs(fn, *model, T, k, arrays.x0 + k * N, u);
  }
  // the external wrenches: their frames once, their values per rollout (6 shared, or one set per rollout)
  const std::vector<BatchWrench>& wrenches = arrays.wrenches;
  detail::checkBatchWrenches(fn, *model, wrenches);
  const int nw = static_cast<int>(wrenches.size());
  if (nw > 0) {
    std::array<ExternalWrench, kMaxBatchWrenches> ws;
    bool shared = true;
    for (const BatchWrench& w : wrenches) shared = shared && w.stride == 0;
    for (std::size_t k = 0; k < (shared ? std::min<std::size_t>(arrays.count, 1) : arrays.count); ++k) {
      detail::gatherWrenches(wrenches, k, ws.data());
      try {
        detail::checkWrenches(*model, ws.data(), nw, fn);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("rolloutBatch: rollout " + std::to_string(k) + ": " +
                                    (std::string(e.what()).substr(std::string(fn).size() + 2)));
      }
    }
  }
  const StopCondition* stop = batch.stop;
  std::atomic<std::size_t> completed{0};
  const auto report = [&] {
    if (batch.stats) *batch.stats = BatchStats{SimdWidth::Scalar, 0, completed.load()};
  };
  try {
    pool.run(
        model, arrays.count, batch.grain == 0 ? 1 : batch.grain,
        [&](std::size_t begin, std::size_t end, Data& data) {
          RolloutScratch scratch(*model);  // one per chunk: a chunk is at least one whole rollout
          Stepper stepper(*model, data, scratch, options);
          std::array<ExternalWrench, kMaxBatchWrenches> ws;
          for (std::size_t k = begin; k < end; ++k) {
            if (nw > 0) {
              detail::gatherWrenches(wrenches, k, ws.data());
              stepper.setWrenches(ws.data(), nw);
            }
            const double* u = arrays.shared_controls ? arrays.u : arrays.u + k * un;
            double* A = arrays.A ? arrays.A + k * T * L * L : nullptr;
            double* B = arrays.B ? arrays.B + k * T * L * static_cast<std::size_t>(n) : nullptr;
            stepper.run(arrays.x0 + k * N, u, arrays.states + k * (T + 1) * N, A, B, k, [&](std::size_t) {
              if (stop && stop->stopRequested()) stop->raise(fn, completed.load(), arrays.count, "rollouts");
            });
            completed.fetch_add(1, std::memory_order_relaxed);
          }
        },
        batch.max_threads);
  } catch (...) {
    report();
    throw;
  }
  report();
}

}  // namespace denoc
