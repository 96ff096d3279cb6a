// The UDU^T factorization of the generalized inertia matrix by reverse Gaussian elimination
// (Saha 1995 appendix A; Saha 1999 appendix B), and what it gives: log det I, I^-1, the full factor.
#pragma once

#include "denoc/algorithm/tree.hpp"
#include "denoc/data.hpp"

namespace denoc {

/// Factors I(q) = U D U^T in O(n) by reverse Gaussian elimination on the articulated-body inertias Mh_k
/// (about the base origin, base axes): psi_k (data.work[k].psi), D = data.D (mh_k plus armature, all > 0 for
/// a valid model) and data.log_det = sum log D. With explicit_u, also the unit upper triangular data.U, U_ik
/// = p_i^T psi_k (O(n^2)). Throws on a bad q.
template <typename S>
void computeUDU(const ModelTpl<S>& model, DataTpl<S>& data,
                const Eigen::Ref<const typename Types<S>::VecX>& q, bool explicit_u = true);

/// The full factor: I(q) (composite bodies) into data.M, and U, D, log det as computeUDU. For n up to
/// kDenseUDUMaxDof, U and D come from reverse Gaussian elimination on the dense I(q) (n^3/6
/// multiplications, cheaper than the articulated-body recursion at these sizes; the factors are unique, so
/// both routes give the same U and D) and psi_k are not updated; above it, from the O(n) recursion
/// and U_ik = p_i^T psi_k. O(n^2) for large n.
inline constexpr int kDenseUDUMaxDof = 24;

namespace detail {
/// Whether a chain of n joints is factored by the dense elimination (fullFactor), the one place of the
/// choice for every caller that depends on which factors it left (U checked or not, psi_k there or not).
inline constexpr bool denseFactors(int n) { return n <= kDenseUDUMaxDof; }
}  // namespace detail

template <typename S>
void computeFullFactor(const ModelTpl<S>& model, DataTpl<S>& data,
                       const Eigen::Ref<const typename Types<S>::VecX>& q);

/// I(q)^-1 = U^-T D^-1 U^-1 into data.Minv (both triangles), returned. For n up to kDenseInverseMaxDof from
/// the dense factors of computeFullFactor (data.M, U, D are left as it leaves them; n^3 / 2 multiplications
/// after I(q)); above it the three sweeps on all unit vectors at once with the O(n) factors, 12 n^2
/// multiplications (the crossover measured: docs/batches.md). Throws on a bad q.
inline constexpr int kDenseInverseMaxDof = 8;
static_assert(kDenseInverseMaxDof <= kDenseUDUMaxDof,
              "the dense inverse needs the dense factors of fullFactor");

template <typename S>
const typename Types<S>::MatX& computeInverseInertia(const ModelTpl<S>& model, DataTpl<S>& data,
                                                     const Eigen::Ref<const typename Types<S>::VecX>& q);

namespace detail {
/// Reverse Gaussian elimination from the placements and link inertias of commonPlacementsAndInertias
/// (data.p0, data.work[k].M); data.log_det only when with_log_det.
template <typename S>
void articulated(const ModelTpl<S>& model, DataTpl<S>& data, bool with_log_det);

/// Reverse Gaussian elimination on the dense data.M: data.U, data.D (data.udu_W is the work matrix, but for
/// 6 and 7 joints, whose elimination runs on local arrays kept in registers: denseUDUFixed). Returns
/// whether every pivot is positive and finite (pivotAccepted; always true for scalars that are not floating
/// point), tested as it is formed rather than in a pass of its own.
template <typename S, bool kDispatch = true>
bool denseUDU(const ModelTpl<S>& model, DataTpl<S>& data);

/// sum_k log D_k, without one logarithm per joint for double.
template <typename S>
S logDetFromD(const typename Types<S>::VecX& D);

/// I^-1 from the dense factors data.U, data.D into data.Minv.
template <typename S>
void inverseFromUDU(const ModelTpl<S>& model, DataTpl<S>& data);

/// I^-1 by the three sweeps on all unit vectors at once with the O(n) factors of articulated() (a tree
/// numbered depth first: of treeArticulated) into data.Minv, 12 multiplications per entry of the upper
/// triangle and sweep (data.sweep_eta_mu and sweep_saved are the work space). kDispatch (double): the AVX2
/// twin where denseKernelsWide().
template <typename S, bool kDispatch = true>
void inverseBySweeps(const ModelTpl<S>& model, DataTpl<S>& data);

/// The full factor without the argument check and log det: I(q) into data.M; U, D into data.U, data.D
/// (dense elimination for n <= kDenseUDUMaxDof, else the O(n) recursion, which also leaves psi_k, 1/mh_k).
/// Returns whether every pivot is positive and finite.
template <typename S>
bool fullFactor(const ModelTpl<S>& model, DataTpl<S>& data,
                const Eigen::Ref<const typename Types<S>::VecX>& q);

/// I^-1 into data.Minv from what fullFactor leaves: the dense route up to kDenseInverseMaxDof, else the
/// sweeps (after the O(n) elimination where fullFactor took the dense one).
template <typename S>
void inverseAfterFactor(const ModelTpl<S>& model, DataTpl<S>& data);

/// U_ik = p_i^T B_ki^T psi_k (B = 1 in the common frame) into data.U, each in dot6's order (data.sweep_eta_mu
/// holds the p_i as six rows). kDispatch (double): the AVX2 twin where denseKernelsWide().
template <typename S, bool kDispatch = true>
void explicitU(const ModelTpl<S>& model, DataTpl<S>& data);

/// X = -(U D U^T)^-1 B for n x n column-major B and X (X must not alias B), by the three sweeps of section
/// 5.2 on every column with the O(n) factors of articulated() (data.p0, data.work[k].psi, inv_mh): 24 n^2
/// multiplications. For double, on all columns at once, one joint at a time (data.sweep_rows,
/// data.sweep_eta_mu are the work space); kDispatch: the AVX2 twin where denseKernelsWide().
template <typename S, bool kDispatch = true>
void negatedSolveUDU(const ModelTpl<S>& model, DataTpl<S>& data, const typename Types<S>::MatX& B,
                     typename Types<S>::MatX& X);
}  // namespace detail

}  // namespace denoc

#include "denoc/algorithm/udu.hxx"

namespace denoc {
// instantiated for double in core/src/instantiate.cpp
extern template void computeUDU<double>(const Model&, Data&, const Eigen::Ref<const Types<double>::VecX>&,
                                        bool);
extern template void computeFullFactor<double>(const Model&, Data&,
                                               const Eigen::Ref<const Types<double>::VecX>&);
extern template const Types<double>::MatX& computeInverseInertia<double>(
    const Model&, Data&, const Eigen::Ref<const Types<double>::VecX>&);
}  // namespace denoc
