#pragma once

#include <type_traits>
#include <vector>

#include "denoc/algorithm/check.hpp"
#include "denoc/algorithm/common_placement.hpp"
#include "denoc/algorithm/inertia_matrix.hpp"
#include "denoc/algorithm/kinematics.hpp"
#include "denoc/algorithm/tree_derivatives.hpp"

namespace denoc {
namespace detail {

template <typename S>
DENOC_FLATTEN void rneaDerivatives(const ModelTpl<S>& model, DataTpl<S>& data,
                                   const Eigen::Ref<const typename Types<S>::VecX>& q,
                                   const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                   const Eigen::Ref<const typename Types<S>::VecX>& qdd,
                                   const typename Types<S>::Vec6* tip_wrench, bool placed) {
  using Vec3 = typename Types<S>::Vec3;
  using Mat3 = typename Types<S>::Mat3;
  using Vec6 = typename Types<S>::Vec6;
  const int n = model.n;
  const JointConstants<S>* joint = model.joint.data();
  DerivativeWork<S>* dw = data.dw.data();
  // for double from kAssemblyLanesMinDof joints, p_i, F1_i, F2_i also as rows across the joints, for the
  // assembly in SIMD lanes
  const bool in_lanes = std::is_same_v<S, double> && n >= kAssemblyLanesMinDof;
  S* rows = data.dw_rows.data();
  assert(data.dw_rows.rows() == n && data.dw_rows.cols() == 18);

  // base to tip (common frame): placements, p_k, M_k; with t_{-1} = 0 and tdot_{-1} = [0; -g] (eq. 32)
  //   pdot_k = t_{k-1} x p_k,  pddot_k = tdot_{k-1} x p_k + t_{k-1} x pdot_k,
  //   t_k = t_{k-1} + p_k qd_k,  tdot_k = tdot_{k-1} + p_k qdd_k + pdot_k qd_k,
  //   h_k = M_k t_k,  w_k = M_k tdot_k + t_k x* h_k,  Mdot_k = t_k x* M_k - M_k t_k x
  // (placed: p_k and M_k as the O(n) forward dynamics left them in data.p0, data.work, by the same steps)
  assert(!(placed && tip_wrench));
  if (!placed) jointAngles(model, data, q);
  CommonPlacement<S> P;
  Vec6 t = Vec6::Zero(), tdot;
  tdot << Vec3::Zero(), -model.gravity_base;
  for (int k = 0; k < n; ++k) {
    const JointConstants<S>& jc = joint[k];
    DerivativeWork<S>& d = dw[k];
    if (placed) {
      d.p = data.p0[k];
      d.M = data.work[k].M;
    } else {
      const JointRotation<S> R{jc.cos_alpha, jc.sin_alpha, data.cos_theta[k], data.sin_theta[k]};
      P.next(R, jointOffset(jc, R, S(q[k])), k == 0);
      d.p = P.jointVector(jc.revolute);
      d.M = P.linkInertia(jc);
    }
    if (in_lanes) {
      for (int r = 0; r < 6; ++r) rows[k + r * n] = d.p[r];
    }
    if (k == 0) {  // t_{-1} = 0
      d.pdot.setZero();
      d.pddot = motionCross(tdot, d.p);
    } else {
      d.pdot = motionCross(t, d.p);
      d.pddot = motionCross(tdot, d.p) + motionCross(t, d.pdot);
    }
    const S qd_k = qd[k];
    t += d.p * qd_k;
    tdot += d.p * S(qdd[k]) + d.pdot * qd_k;
    d.h = d.M * t;
    d.w = d.M * tdot + forceCross(t, d.h);
    inertiaRate(d.M, t, d.Mdot_I);
  }

  // tip to base: composite inertia Mt_k, its rate, momentum ht_k and the wrench w_k transmitted by joint k
  // (the environment's wrench on the last link moved to the base origin, as inverseDynamics applies it);
  // tau_k = p_k^T w_k and the four products the assembly reads
  RigidInertia<S> Mt{S(0), Vec3::Zero(), Sym3<S>::zero()};
  Sym3<S> Mt_Idot = Sym3<S>::zero();
  Vec6 ht = Vec6::Zero(), w = Vec6::Zero();
  if (tip_wrench) {
    const Mat3 R0 = P.rotation();
    const Vec3 f = R0 * (model.tip_rotation * tip_wrench->template tail<3>());
    const Vec3 P_tip = P.origin() + R0 * model.tip_origin;
    w << -(R0 * (model.tip_rotation * tip_wrench->template head<3>()) + P_tip.cross(f)), -f;
  }
  for (int k = n - 1; k >= 0; --k) {
    DerivativeWork<S>& d = dw[k];
    Mt += d.M;
    Mt_Idot += d.Mdot_I;
    ht += d.h;
    const Vec3 Mt_hdot = ht.template tail<3>();  // the first-moment rate of the subchain: its linear momentum
    w += d.w;
    data.tau[k] = d.p.dot(w) + joint[k].armature * S(qdd[k]);
    Vec6 r, c;
    coriolisParts<S>(Mt_hdot, Mt_Idot, ht, d.p, r, c);
    d.F1 = Mt * d.p;
    d.F2 = r - c;
    if (in_lanes) {
      for (int e = 0; e < 6; ++e) {
        rows[k + (6 + e) * n] = d.F1[e];
        rows[k + (12 + e) * n] = d.F2[e];
      }
    }
    if (k == 0) break;  // G_0, H_0 serve rows above joint 0: none
    d.H = S(2) * (Mt * d.pdot) + r + c;
    coriolisParts<S>(Mt_hdot, Mt_Idot, ht, d.pdot, r, c);
    d.G = forceCross(d.p, w) + Mt * d.pddot + r + c;
  }

  // assembly, column j: rows i >= j from the row products F1_i, F2_i, rows i < j from p_i and the column
  // products G_j, H_j (docs/planning.md); for double over the rows in SIMD lanes, with dot6's bits
  S* dq = data.dtau_dq.data();
  S* dv = data.dtau_dqd.data();
  if constexpr (std::is_same_v<S, double>) {
    if (in_lanes) return assembleDerivativesWide(rows, dw, dq, dv, n);
  }
  for (int j = 0; j < n; ++j) {
    const DerivativeWork<S>& c = dw[j];
    S* dq_j = dq + static_cast<Eigen::Index>(j) * n;
    S* dv_j = dv + static_cast<Eigen::Index>(j) * n;
    for (int i = 0; i < j; ++i) {
      dq_j[i] = dot6(dw[i].p, c.G);
      dv_j[i] = dot6(dw[i].p, c.H);
    }
    for (int i = j; i < n; ++i) {
      const DerivativeWork<S>& r = dw[i];
      const S f1_pdot = dot6(r.F1, c.pdot);
      dq_j[i] = dot6(r.F1, c.pddot) + dot6(r.F2, c.pdot);
      dv_j[i] = f1_pdot + f1_pdot + dot6(r.F2, c.p);
    }
  }
}

}  // namespace detail

template <typename S>
void computeInverseDynamicsDerivatives(const ModelTpl<S>& model, DataTpl<S>& data,
                                       const Eigen::Ref<const typename Types<S>::VecX>& q,
                                       const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                       const Eigen::Ref<const typename Types<S>::VecX>& qdd) {
  if (!model.serial) {
    return detail::treeInverseDynamicsDerivatives<S>(model, data, q, qd, qdd, nullptr, 0,
                                                     "computeInverseDynamicsDerivatives");
  }
  detail::checkData(model, data, "computeInverseDynamicsDerivatives");
  detail::checkVectors(model, "computeInverseDynamicsDerivatives", q, "q", qd, "qd", qdd, "qdd");
  detail::rneaDerivatives<S>(model, data, q, qd, qdd, nullptr);
}

template <typename S>
void computeInverseDynamicsDerivatives(const ModelTpl<S>& model, DataTpl<S>& data,
                                       const Eigen::Ref<const typename Types<S>::VecX>& q,
                                       const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                       const Eigen::Ref<const typename Types<S>::VecX>& qdd,
                                       const typename Types<S>::Vec6& tip_wrench) {
  if (!model.serial) {
    if constexpr (std::is_floating_point_v<S>) {
      detail::checkEntries<S>(tip_wrench, "computeInverseDynamicsDerivatives", "tip_wrench");
    }
    const ExternalWrenchTpl<S> tip{model.n, tip_wrench, ReferenceFrame::Local};
    return detail::treeInverseDynamicsDerivatives<S>(model, data, q, qd, qdd, &tip, 1,
                                                     "computeInverseDynamicsDerivatives");
  }
  detail::checkData(model, data, "computeInverseDynamicsDerivatives");
  detail::checkVectors(model, "computeInverseDynamicsDerivatives", q, "q", qd, "qd", qdd, "qdd");
  if constexpr (std::is_floating_point_v<S>) {
    // finite and within kMaxStateValue, as every dynamics route checks a tip wrench
    detail::checkEntries<S>(tip_wrench, "computeInverseDynamicsDerivatives", "tip_wrench");
  }
  detail::rneaDerivatives<S>(model, data, q, qd, qdd, &tip_wrench);
}

template <typename S>
void computeInverseDynamicsDerivatives(const ModelTpl<S>& model, DataTpl<S>& data,
                                       const Eigen::Ref<const typename Types<S>::VecX>& q,
                                       const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                       const Eigen::Ref<const typename Types<S>::VecX>& qdd,
                                       const std::vector<ExternalWrenchTpl<S>>& wrenches) {
  detail::treeInverseDynamicsDerivatives<S>(model, data, q, qd, qdd, wrenches.data(),
                                            static_cast<int>(wrenches.size()),
                                            "computeInverseDynamicsDerivatives");
}

}  // namespace denoc
