#pragma once

#include <type_traits>
#include <vector>

#include "denoc/algorithm/check.hpp"
#include "denoc/algorithm/forward_dynamics.hpp"
#include "denoc/algorithm/inertia_matrix.hpp"
#include "denoc/algorithm/inverse_dynamics.hpp"
#include "denoc/algorithm/inverse_dynamics_derivatives.hpp"
#include "denoc/algorithm/tree_derivatives.hpp"
#include "denoc/algorithm/udu.hpp"

namespace denoc {
namespace detail {

template <typename S>
DENOC_FLATTEN void abaDerivatives(const ModelTpl<S>& model, DataTpl<S>& data,
                                  const Eigen::Ref<const typename Types<S>::VecX>& q,
                                  const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                  const Eigen::Ref<const typename Types<S>::VecX>& tau,
                                  const typename Types<S>::Vec6* tip_wrench) {
  const int n = model.n;
  // the tip wrench's joint torques, ID(q, 0, 0, wrench) without gravity, move to the right-hand side
  if (tip_wrench) {
    rnea<S>(model, data, q, data.zeros, nullptr, tip_wrench, false, data.tau_eff);
    data.tau_eff = tau - data.tau_eff;
    forwardDynamicsSaha<S>(model, data, q, qd, data.tau_eff);
  } else {
    forwardDynamicsSaha<S>(model, data, q, qd, tau);
  }
  // dtau/dq, dtau/dqd at qdd, on the forward dynamics' placements (its factors stay in data.work, data.p0)
  rneaDerivatives<S>(model, data, q, qd, data.qdd, tip_wrench, tip_wrench == nullptr);
  // I^-1: from the dense factors of I(q) for a few joints, else by the sweeps with the forward dynamics'
  // O(n) factors (the route of computeInverseInertia)
  if (n <= kDenseInverseMaxDof) {
    crba(model, data);  // the link inertias and p_k of the forward dynamics
    denseUDU(model, data);
    inverseFromUDU(model, data);
  } else {
    inverseBySweeps(model, data);
  }
  // -I^-1 dtau/dq, -I^-1 dtau/dqd: two dense products (n^3 each, in SIMD lanes) up to the measured crossover,
  // else the three sweeps on every column (24 n^2 each)
  if (n <= productDerivativesMaxDof<S>()) {
    negatedProduct<S>(data.Minv, data.dtau_dq, data.dqdd_dq);
    negatedProduct<S>(data.Minv, data.dtau_dqd, data.dqdd_dqd);
  } else {
    negatedSolveUDU<S>(model, data, data.dtau_dq, data.dqdd_dq);
    negatedSolveUDU<S>(model, data, data.dtau_dqd, data.dqdd_dqd);
  }
}

}  // namespace detail

template <typename S>
void computeForwardDynamicsDerivatives(const ModelTpl<S>& model, DataTpl<S>& data,
                                       const Eigen::Ref<const typename Types<S>::VecX>& q,
                                       const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                       const Eigen::Ref<const typename Types<S>::VecX>& tau) {
  if (!model.serial) {
    return detail::treeForwardDynamicsDerivatives<S>(model, data, q, qd, tau, nullptr, 0,
                                                     "computeForwardDynamicsDerivatives");
  }
  detail::checkData(model, data, "computeForwardDynamicsDerivatives");
  detail::checkVectors(model, "computeForwardDynamicsDerivatives", q, "q", qd, "qd", tau, "tau");
  detail::abaDerivatives<S>(model, data, q, qd, tau, nullptr);
}

template <typename S>
void computeForwardDynamicsDerivatives(const ModelTpl<S>& model, DataTpl<S>& data,
                                       const Eigen::Ref<const typename Types<S>::VecX>& q,
                                       const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                       const Eigen::Ref<const typename Types<S>::VecX>& tau,
                                       const typename Types<S>::Vec6& tip_wrench) {
  if (!model.serial) {
    if constexpr (std::is_floating_point_v<S>) {
      detail::checkEntries<S>(tip_wrench, "computeForwardDynamicsDerivatives", "tip_wrench");
    }
    const ExternalWrenchTpl<S> tip{model.n, tip_wrench, ReferenceFrame::Local};
    return detail::treeForwardDynamicsDerivatives<S>(model, data, q, qd, tau, &tip, 1,
                                                     "computeForwardDynamicsDerivatives");
  }
  detail::checkData(model, data, "computeForwardDynamicsDerivatives");
  detail::checkVectors(model, "computeForwardDynamicsDerivatives", q, "q", qd, "qd", tau, "tau");
  if constexpr (std::is_floating_point_v<S>) {
    // finite and within kMaxStateValue, as every dynamics route checks a tip wrench
    detail::checkEntries<S>(tip_wrench, "computeForwardDynamicsDerivatives", "tip_wrench");
  }
  detail::abaDerivatives<S>(model, data, q, qd, tau, &tip_wrench);
}

template <typename S>
void computeForwardDynamicsDerivatives(const ModelTpl<S>& model, DataTpl<S>& data,
                                       const Eigen::Ref<const typename Types<S>::VecX>& q,
                                       const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                       const Eigen::Ref<const typename Types<S>::VecX>& tau,
                                       const std::vector<ExternalWrenchTpl<S>>& wrenches) {
  detail::treeForwardDynamicsDerivatives<S>(model, data, q, qd, tau, wrenches.data(),
                                            static_cast<int>(wrenches.size()),
                                            "computeForwardDynamicsDerivatives");
}

}  // namespace denoc
