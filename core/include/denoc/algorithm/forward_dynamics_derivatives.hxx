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

/// Entries o_ij = sum_k a_ik (-b_kj) (k ascending from 0) of n x n column-major matrices for the rows
/// i >= i0 of column j, and of column j + 1 with kTwo (one load of a_ik for both).
template <typename S, bool kTwo>
DENOC_INLINE void negatedRows(const S* a, const S* b, S* o, Eigen::Index n, Eigen::Index i0, Eigen::Index j) {
  const S* b0 = b + j * n;
  const S* b1 = b0 + n;
  for (Eigen::Index i = i0; i < n; ++i) {
    S s0 = S(0), s1 = S(0);
    for (Eigen::Index k = 0; k < n; ++k) {
      const S aik = a[i + k * n];
      s0 += aik * -b0[k];
      if constexpr (kTwo) s1 += aik * -b1[k];
    }
    o[i + j * n] = s0;
    if constexpr (kTwo) o[i + (j + 1) * n] = s1;
  }
}

/// out = -A B for A symmetric (both triangles stored), all n x n column-major; out must not alias B. Each
/// entry is o_ij = sum_k a_ik (-b_kj), k ascending from 0. For double, blocks of 4 rows x 2 columns of out
/// are held in pairs of lanes over the whole sum (two loads of A and two of B for 8 multiply-adds, where
/// the column-by-column loop loads and stores out at each of them); the order of each sum is the same, so
/// are the bits.
template <typename S>
DENOC_FLATTEN void negatedProduct(const typename Types<S>::MatX& A, const typename Types<S>::MatX& B,
                                  typename Types<S>::MatX& out) {
  const Eigen::Index n = A.rows();
  const S* a = A.data();
  const S* b = B.data();
  S* o = out.data();
  if constexpr (std::is_same_v<S, double>) {
    using Pair = PairOfLanes;
    Eigen::Index j = 0;
    for (; j + 2 <= n; j += 2) {
      const double* b0 = b + j * n;
      const double* b1 = b0 + n;
      double* o0 = o + j * n;
      double* o1 = o0 + n;
      Eigen::Index i = 0;
      for (; i + 4 <= n; i += 4) {
        Pair c00{}, c10{}, c01{}, c11{};  // rows i, i + 1 and i + 2, i + 3 of columns j and j + 1
        for (Eigen::Index k = 0; k < n; ++k) {
          const double* ak = a + k * n + i;
          const Pair x0 = loadPair(ak), x1 = loadPair(ak + 2);
          const double y0 = -b0[k], y1 = -b1[k];
          c00 += x0 * y0;
          c10 += x1 * y0;
          c01 += x0 * y1;
          c11 += x1 * y1;
        }
        storePair(o0 + i, c00);
        storePair(o0 + i + 2, c10);
        storePair(o1 + i, c01);
        storePair(o1 + i + 2, c11);
      }
      negatedRows<S, true>(a, b, o, n, i, j);  // the last rows
    }
    if (j < n) negatedRows<S, false>(a, b, o, n, 0, j);  // the last column
    return;
  }
  for (Eigen::Index j = 0; j < n; ++j) negatedRows<S, false>(a, b, o, n, 0, j);
}

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
  // dtau/dq, dtau/dqd at qdd (the factors of the forward dynamics stay in data.work, data.p0)
  rneaDerivatives<S>(model, data, q, qd, data.qdd, tip_wrench);
  if (n <= kDenseDerivativesMaxDof) {
    crba(model, data);  // the link inertias and p_k of the forward dynamics
    denseUDU(model, data);
    inverseFromUDU(model, data);
    negatedProduct<S>(data.Minv, data.dtau_dq, data.dqdd_dq);
    negatedProduct<S>(data.Minv, data.dtau_dqd, data.dqdd_dqd);
  } else {
    inverseBySweeps(model, data);  // the factors of the forward dynamics
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
