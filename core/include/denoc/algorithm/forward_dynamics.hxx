#pragma once

#include <cmath>
#include <stdexcept>

#include "denoc/algorithm/check.hpp"
#include "denoc/algorithm/inertia_matrix.hpp"
#include "denoc/algorithm/inverse_dynamics.hpp"
#include "denoc/algorithm/kinematics.hpp"
#include "denoc/algorithm/udu.hpp"

namespace denoc {

template <typename S>
const typename Types<S>::VecX& forwardDynamics(const ModelTpl<S>& model, DataTpl<S>& data,
                                               const Eigen::Ref<const typename Types<S>::VecX>& q,
                                               const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                               const Eigen::Ref<const typename Types<S>::VecX>& tau) {
  detail::checkVector(model, q, "forwardDynamics", "q");
  detail::checkVector(model, qd, "forwardDynamics", "qd");
  detail::checkVector(model, tau, "forwardDynamics", "tau");
  // phi = tau - (inverse dynamics with qdd = 0); the recursion also leaves the local placements
  detail::rnea<S>(model, data, q, qd, nullptr, nullptr, true, data.phi);
  data.phi = tau - data.phi;
  computeCommonPlacements(model, data);
  detail::articulated(model, data, false);
  detail::solveUDU(model, data, data.phi, data.qdd);
  return data.qdd;
}

namespace detail {

template <typename S> bool choleskyInPlace(typename Types<S>::MatX& A) {
  using std::sqrt;
  const Eigen::Index n = A.rows();
  // right-looking, column oriented: contiguous column updates
  for (Eigen::Index j = 0; j < n; ++j) {
    const S d = A(j, j);
    if (!(d > S(0))) return false;
    const S l = sqrt(d);
    A(j, j) = l;
    const Eigen::Index m = n - j - 1;
    if (m == 0) break;
    A.col(j).tail(m) /= l;
    for (Eigen::Index c = j + 1; c < n; ++c) {
      A.col(c).tail(n - c) -= A(c, j) * A.col(j).tail(n - c);
    }
  }
  return true;
}

template <typename S> void choleskySolveInPlace(const typename Types<S>::MatX& L, typename Types<S>::VecX& x) {
  const Eigen::Index n = L.rows();
  // L y = b
  for (Eigen::Index j = 0; j < n; ++j) {
    x[j] /= L(j, j);
    const Eigen::Index m = n - j - 1;
    if (m > 0) x.tail(m) -= x[j] * L.col(j).tail(m);
  }
  // L^T x = y
  for (Eigen::Index j = n - 1; j >= 0; --j) {
    const Eigen::Index m = n - j - 1;
    if (m > 0) x[j] -= L.col(j).tail(m).dot(x.tail(m));
    x[j] /= L(j, j);
  }
}

}  // namespace detail

template <typename S>
const typename Types<S>::VecX& forwardDynamicsCholesky(const ModelTpl<S>& model, DataTpl<S>& data,
                                                       const Eigen::Ref<const typename Types<S>::VecX>& q,
                                                       const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                                       const Eigen::Ref<const typename Types<S>::VecX>& tau) {
  detail::checkVector(model, q, "forwardDynamicsCholesky", "q");
  detail::checkVector(model, qd, "forwardDynamicsCholesky", "qd");
  detail::checkVector(model, tau, "forwardDynamicsCholesky", "tau");
  detail::rnea<S>(model, data, q, qd, nullptr, nullptr, true, data.qdd);
  data.qdd = tau - data.qdd;
  computeCommonPlacements(model, data);
  detail::crba(model, data);
  data.L = data.M;
  if (!detail::choleskyInPlace<S>(data.L)) {
    throw std::runtime_error("forwardDynamicsCholesky: the inertia matrix is not positive definite");
  }
  detail::choleskySolveInPlace<S>(data.L, data.qdd);
  return data.qdd;
}

}  // namespace denoc
