// Analytic derivatives of the forward dynamics qdd = FD(q, qd, tau): differentiating
// ID(q, qd, FD(q, qd, tau)) = tau gives, at qdd = FD(q, qd, tau),
//   dqdd/dq = -I(q)^-1 dtau/dq,   dqdd/dqd = -I(q)^-1 dtau/dqd,   dqdd/dtau = I(q)^-1,
// with dtau/dq, dtau/dqd from computeInverseDynamicsDerivatives and I^-1 applied through the U D U^T
// factors of the forward dynamics (never by inverting I(q) densely for large n). docs/planning.md.
#pragma once

#include <type_traits>
#include <vector>

#include "denoc/algorithm/negated_product.hpp"
#include "denoc/data.hpp"

namespace denoc {

/// qdd = FD(q, qd, tau) into data.qdd, dqdd/dq and dqdd/dqd (n x n) into data.dqdd_dq and data.dqdd_dqd, and
/// dqdd/dtau = I(q)^-1 into data.Minv. Also leaves dtau/dq, dtau/dqd at (q, qd, qdd) in data.dtau_dq,
/// data.dtau_dqd. I^-1 from the dense factors for n up to kDenseInverseMaxDof, else by inverseBySweeps with
/// the factors of the forward dynamics (12 n^2); then -I^-1 dtau/dq, -I^-1 dtau/dqd by two dense products for
/// n up to detail::productDerivativesMaxDof (in SIMD lanes, faster at these sizes), above by
/// negatedSolveUDU, the three sweeps on every column: O(n^2) in all. No
/// allocation. Throws std::invalid_argument on a wrong size or a non-finite entry. A tree model
/// (algorithm/tree_derivatives.hpp): q has nq entries, qd = v and tau nv, the results are nv x nv with the q
/// columns along integrateConfiguration (v and tau held); qdd by the tree-sparse U D U^T of I(q) (also left
/// in data.M, U, D, log_det; D as treeForwardDynamicsDerivatives says), then as above: up to
/// detail::productDerivativesMaxDof, I^-1 by computeInverseInertia's route and two dense products, above it
/// I^-1 and -I^-1 dtau/dx column by column by the sparse factor's solves. NumericalError on a pivot that is
/// not positive and finite or a non-finite result.
template <typename S>
void computeForwardDynamicsDerivatives(const ModelTpl<S>& model, DataTpl<S>& data,
                                       const Eigen::Ref<const typename Types<S>::VecX>& q,
                                       const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                       const Eigen::Ref<const typename Types<S>::VecX>& tau);

/// As above with a wrench [moment; force] applied by the environment on the last link, in the model's tip
/// frame about its origin (fixed in that frame), as inverseDynamics takes it: qdd solves
/// inverseDynamics(q, qd, qdd, tip_wrench) = tau.
template <typename S>
void computeForwardDynamicsDerivatives(const ModelTpl<S>& model, DataTpl<S>& data,
                                       const Eigen::Ref<const typename Types<S>::VecX>& q,
                                       const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                       const Eigen::Ref<const typename Types<S>::VecX>& tau,
                                       const typename Types<S>::Vec6& tip_wrench);

/// As above with external wrenches on any frames (ExternalWrench: a link, the tip, the root link; Local or
/// Base axes, about a point fixed on the link), as forwardDynamics(q, qd, tau, wrenches) takes them; any
/// model (a serial chain by the tree route, algorithm/tree_derivatives.hpp, eq. D.0). A Local wrench is fixed
/// in its link; a Base wrench keeps its world axes while its point moves with the link, which adds its own
/// q-dependence. At most as many wrenches as the caller likes: no allocation.
template <typename S>
void computeForwardDynamicsDerivatives(const ModelTpl<S>& model, DataTpl<S>& data,
                                       const Eigen::Ref<const typename Types<S>::VecX>& q,
                                       const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                       const Eigen::Ref<const typename Types<S>::VecX>& tau,
                                       const std::vector<ExternalWrenchTpl<S>>& wrenches);

namespace detail {
/// The unchecked derivatives (tip_wrench null: none).
template <typename S>
void abaDerivatives(const ModelTpl<S>& model, DataTpl<S>& data,
                    const Eigen::Ref<const typename Types<S>::VecX>& q,
                    const Eigen::Ref<const typename Types<S>::VecX>& qd,
                    const Eigen::Ref<const typename Types<S>::VecX>& tau,
                    const typename Types<S>::Vec6* tip_wrench);
}  // namespace detail

}  // namespace denoc

#include "denoc/algorithm/forward_dynamics_derivatives.hxx"

namespace denoc {
// instantiated for double in core/src/instantiate_planning.cpp
extern template void computeForwardDynamicsDerivatives<double>(const Model&, Data&,
                                                               const Eigen::Ref<const Types<double>::VecX>&,
                                                               const Eigen::Ref<const Types<double>::VecX>&,
                                                               const Eigen::Ref<const Types<double>::VecX>&);
extern template void computeForwardDynamicsDerivatives<double>(const Model&, Data&,
                                                               const Eigen::Ref<const Types<double>::VecX>&,
                                                               const Eigen::Ref<const Types<double>::VecX>&,
                                                               const Eigen::Ref<const Types<double>::VecX>&,
                                                               const Types<double>::Vec6&);
extern template void computeForwardDynamicsDerivatives<double>(const Model&, Data&,
                                                               const Eigen::Ref<const Types<double>::VecX>&,
                                                               const Eigen::Ref<const Types<double>::VecX>&,
                                                               const Eigen::Ref<const Types<double>::VecX>&,
                                                               const std::vector<ExternalWrench>&);
}  // namespace denoc
