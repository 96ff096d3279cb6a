// Forward dynamics: the O(n) three-sweep route of the DeNOC (Saha 1999, section 5.2) and the O(n^3)
// reference route (inertia matrix and dense Cholesky factorization).
#pragma once

#include "denoc/algorithm/tree.hpp"
#include "denoc/data.hpp"

namespace denoc {

/// Joint accelerations qdd = I(q)^-1 (tau - C(q, qd) qd - g(q)) by the O(n) route of section 5.2 in the
/// common frame, in three passes: placements, twists and the link wrenches of the motion with qdd = 0
/// (base to tip); the reverse Gaussian elimination together with phi = tau - p^T w and the first of the
/// three sweeps (tip to base); the last sweep (base to tip). Result in data.qdd (returned); data.D and the
/// psi_k are left as computeUDU leaves them. Throws on a bad argument.
template <typename S>
const typename Types<S>::VecX& forwardDynamics(const ModelTpl<S>& model, DataTpl<S>& data,
                                               const Eigen::Ref<const typename Types<S>::VecX>& q,
                                               const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                               const Eigen::Ref<const typename Types<S>::VecX>& tau);

/// The same accelerations by the O(n^3) reference route: I(q) from composite bodies (data.M), its dense
/// Cholesky factor (lower triangle of data.chol_L; from kCholeskyBlockedMinDof joints on by the blocked
/// kernel, detail::choleskyBlocked), two triangular solves. Result in data.qdd (returned). Throws on a bad
/// argument, NumericalError when I(q) is not numerically positive definite.
template <typename S>
const typename Types<S>::VecX& forwardDynamicsCholesky(const ModelTpl<S>& model, DataTpl<S>& data,
                                                       const Eigen::Ref<const typename Types<S>::VecX>& q,
                                                       const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                                       const Eigen::Ref<const typename Types<S>::VecX>& tau);

/// Joints from which forwardDynamicsCholesky (double) factors I(q) with the blocked, SIMD kernel instead of
/// the plain loop (measured: docs/batches.md).
inline constexpr int kCholeskyBlockedMinDof = 24;

namespace detail {
/// In-place dense Cholesky factorization A = L L^T of the lower triangle of A (n x n), no allocation.
/// Returns false if A is not positive definite.
template <typename S>
bool choleskyInPlace(typename Types<S>::MatX& A);

/// The same factorization, right-looking blocked, of the n x n column-major `a`
/// (core/src/cholesky_blocked.cpp) with `lanes` doubles per SIMD register (2, 4, 8; 0: the CPU's default, see
/// denoc/batch.hpp; more than the CPU runs: its widest). The same bits at every width; not those of
/// choleskyInPlace. No allocation.
bool choleskyBlocked(double* a, int n, int lanes = 0);

/// Solves L L^T x = b in place (x holds b on entry), L from choleskyInPlace.
template <typename S>
void choleskySolveInPlace(const typename Types<S>::MatX& L, typename Types<S>::VecX& x);
}  // namespace detail

}  // namespace denoc

#include "denoc/algorithm/forward_dynamics.hxx"

namespace denoc {
// instantiated for double in core/src/instantiate.cpp
extern template const Types<double>::VecX& forwardDynamics<double>(
    const Model&, Data&, const Eigen::Ref<const Types<double>::VecX>&,
    const Eigen::Ref<const Types<double>::VecX>&, const Eigen::Ref<const Types<double>::VecX>&);
extern template const Types<double>::VecX& forwardDynamicsCholesky<double>(
    const Model&, Data&, const Eigen::Ref<const Types<double>::VecX>&,
    const Eigen::Ref<const Types<double>::VecX>&, const Eigen::Ref<const Types<double>::VecX>&);
}  // namespace denoc
