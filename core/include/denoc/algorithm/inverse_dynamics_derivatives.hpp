// Analytic derivatives of the inverse dynamics: d tau / d q and d tau / d qd of
//   tau = I(q) qdd + C(q, qd) qd + g(q) (+ armature qdd) - (tip wrench's joint torques),
// by one base-to-tip and one tip-to-base sweep in the common frame (base axes, base origin) and an O(n^2)
// assembly, after Carpentier and Mansard (RSS 2018) written in Saha's quantities: joint-rate propagation
// vectors p_i, twists t_i, twist rates tdot_i, wrenches w_i, composite inertias Mt_i. d tau / d qdd is
// I(q) (computeInertiaMatrix). The derivation is in docs/planning.md.
#pragma once

#include <vector>

#include "denoc/data.hpp"

namespace denoc {

/// d tau / d q and d tau / d qd (n x n each) into data.dtau_dq and data.dtau_dqd, and tau itself into
/// data.tau, at (q, qd, qdd), gravity from the model. q, qd, qdd: n entries. Entry (i, j) is
/// d tau_i / d q_j. O(n^2), no allocation. Throws std::invalid_argument on a wrong size or a non-finite
/// entry.
/// A tree model (algorithm/tree_derivatives.hpp): q has nq entries, qd = v and qdd = a nv, the results are
/// nv x nv, and column j of dtau_dq is the derivative along integrateConfiguration(q, e_j eps) with v and a
/// held (for a floating root: its body-frame velocity and acceleration); entries off the ancestor pairs
/// are zero. NumericalError on a non-finite result.
template <typename S>
void computeInverseDynamicsDerivatives(const ModelTpl<S>& model, DataTpl<S>& data,
                                       const Eigen::Ref<const typename Types<S>::VecX>& q,
                                       const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                       const Eigen::Ref<const typename Types<S>::VecX>& qdd);

/// As above with a wrench [moment; force] applied by the environment on the last link, in the model's tip
/// frame, moment about its origin (as inverseDynamics takes it); the wrench is fixed in the tip frame.
template <typename S>
void computeInverseDynamicsDerivatives(const ModelTpl<S>& model, DataTpl<S>& data,
                                       const Eigen::Ref<const typename Types<S>::VecX>& q,
                                       const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                       const Eigen::Ref<const typename Types<S>::VecX>& qdd,
                                       const typename Types<S>::Vec6& tip_wrench);

/// As above with external wrenches on any frames (ExternalWrench: a link, the tip, the root link; Local or
/// Base axes, about a point fixed on the link), as inverseDynamics(q, qd, qdd, wrenches) takes them; any
/// model (a serial chain by the tree route, algorithm/tree_derivatives.hpp, eq. D.0). A Local wrench is fixed
/// in its link; a Base wrench keeps its world axes while its point moves with the link, which adds its own
/// q-dependence. At most as many wrenches as the caller likes: no allocation.
template <typename S>
void computeInverseDynamicsDerivatives(const ModelTpl<S>& model, DataTpl<S>& data,
                                       const Eigen::Ref<const typename Types<S>::VecX>& q,
                                       const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                       const Eigen::Ref<const typename Types<S>::VecX>& qdd,
                                       const std::vector<ExternalWrenchTpl<S>>& wrenches);

namespace detail {
/// The unchecked derivatives (tip_wrench null: none): the two sweeps (data.dw, data.tau) and the assembly
/// of data.dtau_dq, data.dtau_dqd. placed: data.p0 and data.work[k].M already hold p_k and M_k at this q
/// (the O(n) forward dynamics leaves them, computed by the same steps), so the placements are not taken
/// again (not with a tip wrench, whose placement needs the last frame).
template <typename S>
void rneaDerivatives(const ModelTpl<S>& model, DataTpl<S>& data,
                     const Eigen::Ref<const typename Types<S>::VecX>& q,
                     const Eigen::Ref<const typename Types<S>::VecX>& qd,
                     const Eigen::Ref<const typename Types<S>::VecX>& qdd,
                     const typename Types<S>::Vec6* tip_wrench, bool placed = false);

/// The fewest joints for which the assembly runs in lanes (below, the loop over the records is as fast; the
/// bits are the same): measured on 2026-11-29, the lanes took 1.02-1.04 of the records' time at 6 and 7
/// joints, 0.96 at 12, 0.87 at 24, 0.66 at 96 (bench_planners IDDerivatives, the two builds interleaved).
inline constexpr int kAssemblyLanesMinDof = 10;

/// The assembly of dtau/dq and dtau/dqd (n x n, column-major) from the records dw and their row quantities
/// rows (data.dw_rows), for double (core/src/derivative_assembly.cpp): each column a loop over the rows in
/// registers of `lanes` doubles (2 or 4; 0: the CPU's default, DENOC_SIMD_WIDTH as for the batches, at most
/// 4; 2 below 4 joints), each product in dot6's order: the same bits at every width.
void assembleDerivativesWide(const double* rows, const DerivativeWork<double>* dw, double* dtau_dq,
                             double* dtau_dqd, int n, int lanes = 0);
}  // namespace detail

}  // namespace denoc

#include "denoc/algorithm/inverse_dynamics_derivatives.hxx"

namespace denoc {
// instantiated for double in core/src/instantiate_planning.cpp
extern template void computeInverseDynamicsDerivatives<double>(const Model&, Data&,
                                                               const Eigen::Ref<const Types<double>::VecX>&,
                                                               const Eigen::Ref<const Types<double>::VecX>&,
                                                               const Eigen::Ref<const Types<double>::VecX>&);
extern template void computeInverseDynamicsDerivatives<double>(const Model&, Data&,
                                                               const Eigen::Ref<const Types<double>::VecX>&,
                                                               const Eigen::Ref<const Types<double>::VecX>&,
                                                               const Eigen::Ref<const Types<double>::VecX>&,
                                                               const Types<double>::Vec6&);
extern template void computeInverseDynamicsDerivatives<double>(const Model&, Data&,
                                                               const Eigen::Ref<const Types<double>::VecX>&,
                                                               const Eigen::Ref<const Types<double>::VecX>&,
                                                               const Eigen::Ref<const Types<double>::VecX>&,
                                                               const std::vector<ExternalWrench>&);
}  // namespace denoc
