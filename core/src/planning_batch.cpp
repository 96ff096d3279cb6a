#include "denoc/planning_batch.hpp"

#include <stdexcept>
#include <string>

#include "batch_engine.hpp"
#include "denoc/algorithm/centroidal.hpp"
#include "denoc/algorithm/forward_dynamics_derivatives.hpp"
#include "denoc/algorithm/inverse_dynamics_derivatives.hpp"
#include "denoc/algorithm/tree.hpp"
#include "denoc/algorithm/tree_derivatives.hpp"

namespace denoc {

namespace {

using CMap = Eigen::Map<const Eigen::VectorXd>;
using WrenchMap = Eigen::Map<const Eigen::Matrix<double, 6, 1>>;
using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// Row-major copy of a matrix.
template <typename M>
void copyRowMajor(const Eigen::MatrixBase<M>& m, double* out) {
  Eigen::Map<RowMajor>(out, m.rows(), m.cols()) = m;
}

/// Rough single-thread ns of one state: a + b n + c n^2 (chunk sizes and stop polling only).
double cost(int n, double a, double b, double c) {
  const double dn = static_cast<double>(n);
  return a + b * dn + c * dn * dn;
}

/// Rough ns of one state of each direction's derivatives (both overloads: tip wrench, link wrenches).
double idDerivativesCost(int n) { return cost(n, 100, 100, 15); }
double fdDerivativesCost(int n) { return cost(n, 100, 150, 40); }

/// What both overloads of inverseDynamicsDerivativesBatch check.
void checkIdDerivativesBatch(const char* fn, const std::shared_ptr<const Model>& model, std::size_t count,
                             const double* q, const double* qd, const double* qdd, const double* dtau_dq,
                             const double* dtau_dqd) {
  detail::checkBatch(fn, model, count,
                     {{q, "q"}, {qd, "qd"}, {qdd, "qdd"}, {dtau_dq, "dtau_dq"}, {dtau_dqd, "dtau_dqd"}});
}

/// What both overloads of forwardDynamicsDerivativesBatch check.
void checkFdDerivativesBatch(const char* fn, const std::shared_ptr<const Model>& model, std::size_t count,
                             const double* q, const double* qd, const double* tau, const double* dqdd_dq,
                             const double* dqdd_dqd) {
  detail::checkBatch(fn, model, count,
                     {{q, "q"}, {qd, "qd"}, {tau, "tau"}, {dqdd_dq, "dqdd_dq"}, {dqdd_dqd, "dqdd_dqd"}});
}

/// State k's inverse dynamics derivatives from d into the row-major outputs (tau when given).
void storeIdDerivatives(const Data& d, std::size_t k, std::size_t nv, double* dtau_dq, double* dtau_dqd,
                        double* tau) {
  const std::size_t o = k * nv;
  copyRowMajor(d.dtau_dq, dtau_dq + o * nv);
  copyRowMajor(d.dtau_dqd, dtau_dqd + o * nv);
  if (tau) Eigen::Map<Eigen::VectorXd>(tau + o, static_cast<Eigen::Index>(nv)) = d.tau;
}

/// State k's forward dynamics derivatives from d into the row-major outputs (I^-1 and qdd when given).
void storeFdDerivatives(const Data& d, std::size_t k, std::size_t nv, double* dqdd_dq, double* dqdd_dqd,
                        double* dqdd_dtau, double* qdd) {
  const std::size_t o = k * nv;
  copyRowMajor(d.dqdd_dq, dqdd_dq + o * nv);
  copyRowMajor(d.dqdd_dqd, dqdd_dqd + o * nv);
  if (dqdd_dtau) copyRowMajor(d.Minv, dqdd_dtau + o * nv);
  if (qdd) Eigen::Map<Eigen::VectorXd>(qdd + o, static_cast<Eigen::Index>(nv)) = d.qdd;
}

}  // namespace

int frameBatchFrames(const Model& model) {
  return model.root == RootJoint::Fixed ? model.n + 1 : model.n + 2;
}

void inverseDynamicsDerivativesBatch(BatchPool& pool, const std::shared_ptr<const Model>& model,
                                     std::size_t count, const double* q, const double* qd, const double* qdd,
                                     double* dtau_dq, double* dtau_dqd, double* tau, const double* tip_wrench,
                                     const BatchOptions& options) {
  constexpr const char* kFn = "inverseDynamicsDerivativesBatch";
  checkIdDerivativesBatch(kFn, model, count, q, qd, qdd, dtau_dq, dtau_dqd);
  const Model& m = *model;
  const auto nq = static_cast<std::size_t>(m.nq), nv = static_cast<std::size_t>(m.nv);
  detail::runStateByState(
      pool, kFn, model, count, idDerivativesCost(m.nv), options, [&](std::size_t k, Data& d) {
        const std::size_t o = k * nv;
        const CMap qk(q + k * nq, m.nq), qdk(qd + o, m.nv), qddk(qdd + o, m.nv);
        if (tip_wrench) {
          computeInverseDynamicsDerivatives(m, d, qk, qdk, qddk, WrenchMap(tip_wrench + 6 * k));
        } else {
          computeInverseDynamicsDerivatives(m, d, qk, qdk, qddk);
        }
        storeIdDerivatives(d, k, nv, dtau_dq, dtau_dqd, tau);
      });
}

void forwardDynamicsDerivativesBatch(BatchPool& pool, const std::shared_ptr<const Model>& model,
                                     std::size_t count, const double* q, const double* qd, const double* tau,
                                     double* dqdd_dq, double* dqdd_dqd, double* dqdd_dtau, double* qdd,
                                     const double* tip_wrench, const BatchOptions& options) {
  constexpr const char* kFn = "forwardDynamicsDerivativesBatch";
  checkFdDerivativesBatch(kFn, model, count, q, qd, tau, dqdd_dq, dqdd_dqd);
  const Model& m = *model;
  const auto nq = static_cast<std::size_t>(m.nq), nv = static_cast<std::size_t>(m.nv);
  detail::runStateByState(
      pool, kFn, model, count, fdDerivativesCost(m.nv), options, [&](std::size_t k, Data& d) {
        const std::size_t o = k * nv;
        const CMap qk(q + k * nq, m.nq), qdk(qd + o, m.nv), tauk(tau + o, m.nv);
        if (tip_wrench) {
          computeForwardDynamicsDerivatives(m, d, qk, qdk, tauk, WrenchMap(tip_wrench + 6 * k));
        } else {
          computeForwardDynamicsDerivatives(m, d, qk, qdk, tauk);
        }
        storeFdDerivatives(d, k, nv, dqdd_dq, dqdd_dqd, dqdd_dtau, qdd);
      });
}

void inverseDynamicsDerivativesBatch(BatchPool& pool, const std::shared_ptr<const Model>& model,
                                     std::size_t count, const double* q, const double* qd, const double* qdd,
                                     double* dtau_dq, double* dtau_dqd, double* tau,
                                     const std::vector<BatchWrench>& wrenches, const BatchOptions& options) {
  constexpr const char* kFn = "inverseDynamicsDerivativesBatch";
  checkIdDerivativesBatch(kFn, model, count, q, qd, qdd, dtau_dq, dtau_dqd);
  const Model& m = *model;
  const auto nq = static_cast<std::size_t>(m.nq), nv = static_cast<std::size_t>(m.nv);
  detail::runWrenchBatch(pool, kFn, model, count, idDerivativesCost(m.nv), wrenches, options,
                         [&](std::size_t k, Data& d, const ExternalWrench* ws, int nw) {
                           const std::size_t o = k * nv;
                           const CMap qk(q + k * nq, m.nq), qdk(qd + o, m.nv), qddk(qdd + o, m.nv);
                           detail::treeInverseDynamicsDerivatives<double>(
                               m, d, qk, qdk, qddk, ws, nw, "computeInverseDynamicsDerivatives");
                           storeIdDerivatives(d, k, nv, dtau_dq, dtau_dqd, tau);
                         });
}

void forwardDynamicsDerivativesBatch(BatchPool& pool, const std::shared_ptr<const Model>& model,
                                     std::size_t count, const double* q, const double* qd, const double* tau,
                                     double* dqdd_dq, double* dqdd_dqd, double* dqdd_dtau, double* qdd,
                                     const std::vector<BatchWrench>& wrenches, const BatchOptions& options) {
  constexpr const char* kFn = "forwardDynamicsDerivativesBatch";
  checkFdDerivativesBatch(kFn, model, count, q, qd, tau, dqdd_dq, dqdd_dqd);
  const Model& m = *model;
  const auto nq = static_cast<std::size_t>(m.nq), nv = static_cast<std::size_t>(m.nv);
  detail::runWrenchBatch(pool, kFn, model, count, fdDerivativesCost(m.nv), wrenches, options,
                         [&](std::size_t k, Data& d, const ExternalWrench* ws, int nw) {
                           const std::size_t o = k * nv;
                           const CMap qk(q + k * nq, m.nq), qdk(qd + o, m.nv), tauk(tau + o, m.nv);
                           detail::treeForwardDynamicsDerivatives<double>(
                               m, d, qk, qdk, tauk, ws, nw, "computeForwardDynamicsDerivatives");
                           storeFdDerivatives(d, k, nv, dqdd_dq, dqdd_dqd, dqdd_dtau, qdd);
                         });
}

void frameBatch(BatchPool& pool, const std::shared_ptr<const Model>& model, std::size_t count,
                const double* q, const double* qd, const FrameQuery& query, const FrameBatchOutput& out,
                const BatchOptions& options) {
  constexpr const char* kFn = "frameBatch";
  detail::checkBatch(kFn, model, count, {{q, "q"}});
  if (out.jdot_qd) detail::checkBatch(kFn, model, count, {{qd, "qd"}});
  if (out.frame_rotations)
    detail::checkBatch(kFn, model, count, {{out.frame_origins, "frame_origins (with frame_rotations)"}});
  // the query once, before any state
  if (model->serial) {
    detail::checkFrame<double>(*model, query.frame, &query.point, kFn);
  } else {
    detail::checkTreeFrame<double>(*model, query.frame, &query.point, kFn);
  }
  if (query.reference != ReferenceFrame::Base && query.reference != ReferenceFrame::Local) {
    throw std::invalid_argument(std::string(kFn) + ": unknown reference frame");
  }
  if (query.rows != TaskRows::Full && query.rows != TaskRows::Linear && query.rows != TaskRows::Angular) {
    throw std::invalid_argument(std::string(kFn) + ": unknown task rows");
  }
  const Model& m = *model;
  const auto nq = static_cast<std::size_t>(m.nq), nv = static_cast<std::size_t>(m.nv);
  const auto frames = static_cast<std::size_t>(frameBatchFrames(m));
  const auto f = static_cast<std::size_t>(query.frame);
  const Eigen::Index r = query.rows == TaskRows::Full ? 6 : 3;
  const double c = cost(m.nv, 100, out.jacobian || out.jdot_qd ? 120 : 60, out.lambda ? 25 : 0);
  detail::runStateByState(pool, kFn, model, count, c, options, [&](std::size_t k, Data& d) {
    const CMap qk(q + k * nq, m.nq);
    if (out.jdot_qd) {
      const CMap qdk(qd + k * nv, m.nv);
      Eigen::Map<Eigen::Matrix<double, 6, 1>>(out.jdot_qd + 6 * k) =
          computeFrameJdotQd(m, d, qk, qdk, query.frame, query.point, query.reference);
    } else if (out.jacobian) {
      computeFrameJacobian(m, d, qk, query.frame, query.point, query.reference);
    } else if (out.rotation || out.origin) {
      Eigen::Matrix3d R;
      Eigen::Vector3d p;
      framePlacement(m, d, qk, query.frame, R, p);
    }
    if (out.jacobian) copyRowMajor(d.J, out.jacobian + k * 6 * nv);
    if (out.rotation) copyRowMajor(d.kin_R[f], out.rotation + 9 * k);
    if (out.origin) Eigen::Map<Eigen::Vector3d>(out.origin + 3 * k) = d.kin_p[f];
    if (out.lambda) {
      computeOperationalSpaceInertia(m, d, qk, query.frame, query.point, query.reference, query.rows);
      copyRowMajor(d.Lambda.topLeftCorner(r, r), out.lambda + static_cast<std::size_t>(r * r) * k);
    }
    if (out.frame_rotations || out.frame_origins) {
      forwardKinematics(m, d, qk);
      for (std::size_t i = 0; i < frames; ++i) {
        if (out.frame_rotations) copyRowMajor(d.kin_R[i], out.frame_rotations + 9 * (frames * k + i));
        Eigen::Map<Eigen::Vector3d>(out.frame_origins + 3 * (frames * k + i)) = d.kin_p[i];
      }
    }
  });
}

void centroidalBatch(BatchPool& pool, const std::shared_ptr<const Model>& model, std::size_t count,
                     const double* q, const double* qd, const CentroidalBatchOutput& out,
                     const BatchOptions& options) {
  constexpr const char* kFn = "centroidalBatch";
  detail::checkBatch(kFn, model, count, {{q, "q"}});
  if (out.momentum) detail::checkBatch(kFn, model, count, {{qd, "qd (for the momentum)"}});
  const Model& m = *model;
  const auto nq = static_cast<std::size_t>(m.nq), nv = static_cast<std::size_t>(m.nv);
  const bool map = out.centroidal || out.momentum;
  detail::runStateByState(pool, kFn, model, count, cost(m.nv, 100, 60, 0), options,
                          [&](std::size_t k, Data& d) {
                            const CMap qk(q + k * nq, m.nq);
                            if (out.momentum) {
                              computeCentroidalMapTimeVariation(m, d, qk, CMap(qd + k * nv, m.nv));
                            } else if (map) {
                              computeCentroidalMap(m, d, qk);
                            } else if (out.com_jacobian) {
                              computeCenterOfMassJacobian(m, d, qk);
                            } else {
                              computeCenterOfMass(m, d, qk);
                            }
                            if (out.com) Eigen::Map<Eigen::Vector3d>(out.com + 3 * k) = d.com;
                            if (out.mass) out.mass[k] = d.mass;
                            if (out.com_jacobian) copyRowMajor(d.Jcom, out.com_jacobian + k * 3 * nv);
                            if (out.centroidal) copyRowMajor(d.Ag, out.centroidal + k * 6 * nv);
                            if (out.momentum)
                              Eigen::Map<Eigen::Matrix<double, 6, 1>>(out.momentum + 6 * k) = d.hg;
                          });
}

}  // namespace denoc
