// Fixman's theorem for serial chains of rigid bodies (Wang and Chirikjian): O(n) solution of I(q) x = b and
// O(n) log det I(q) from the block-tridiagonal inverse H = K M^-1 K^T of the unconstrained mass matrix.
#pragma once

#include "denoc/data.hpp"

namespace denoc {

/// Solves I(q) x = b in O(n) by Fixman's route: x = (H11 - H12 H22^-1 H21) b (Wang and Chirikjian, eq. 9),
/// H22 by the block Thomas algorithm. I(q) includes the armature (see fixman.hxx: each nonzero armature
/// a_i is an extra rotor coordinate, a hard constraint, so the 5x5 blocks of H22 become 6x6). b, x: n
/// entries each; they may alias. Also sets data.fx_log_det. Throws std::invalid_argument on a bad argument.
template <typename S>
void fixmanSolve(const ModelTpl<S>& model, DataTpl<S>& data,
                 const Eigen::Ref<const typename Types<S>::VecX>& q,
                 const Eigen::Ref<const typename Types<S>::VecX>& b, Eigen::Ref<typename Types<S>::VecX> x);

/// log det I(q) (armature included) in O(n) by Fixman's theorem (Wang and Chirikjian, after eq. 5):
/// det I = det(M) det(H22) / det(K)^2, here det K = +-1 and det M_i = m_i^3 det Ic_i. Into data.fx_log_det
/// (returned). Throws on a bad q.
template <typename S>
S fixmanLogDet(const ModelTpl<S>& model, DataTpl<S>& data,
               const Eigen::Ref<const typename Types<S>::VecX>& q);

/// Forward dynamics by the Fixman route: phi = tau - (inverse dynamics with qdd = 0), then I(q) qdd = phi
/// by fixmanSolve. Result in data.qdd (returned). O(n). Throws on a bad argument.
template <typename S>
const typename Types<S>::VecX& forwardDynamicsFixman(const ModelTpl<S>& model, DataTpl<S>& data,
                                                     const Eigen::Ref<const typename Types<S>::VecX>& q,
                                                     const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                                     const Eigen::Ref<const typename Types<S>::VecX>& tau);

namespace detail {
/// Builds H (data.fx_Hd, fx_Ho) and factors H22 (fx_L, fx_G, fx_Dinv, fx_sh_*) from the local placements
/// (computeLocalPlacements) already in data; sets data.fx_log_det. Returns the hard-block size (5 or 6).
/// Throws NumericalError, naming `function`, when a pivot block is not numerically positive definite.
template <typename S>
int fixmanFactor(const ModelTpl<S>& model, DataTpl<S>& data, const char* function = "fixman");

/// x = I^-1 b with the factors of fixmanFactor (block size bs). b and x may alias.
template <typename S>
void fixmanApply(const ModelTpl<S>& model, DataTpl<S>& data, int bs,
                 const Eigen::Ref<const typename Types<S>::VecX>& b, Eigen::Ref<typename Types<S>::VecX> x);
}  // namespace detail

}  // namespace denoc

#include "denoc/algorithm/fixman.hxx"

namespace denoc {
// instantiated for double in core/src/instantiate_convective_fixman.cpp
extern template void fixmanSolve<double>(const Model&, Data&, const Eigen::Ref<const Types<double>::VecX>&,
                                         const Eigen::Ref<const Types<double>::VecX>&,
                                         Eigen::Ref<Types<double>::VecX>);
extern template double fixmanLogDet<double>(const Model&, Data&,
                                            const Eigen::Ref<const Types<double>::VecX>&);
extern template const Types<double>::VecX& forwardDynamicsFixman<double>(
    const Model&, Data&, const Eigen::Ref<const Types<double>::VecX>&,
    const Eigen::Ref<const Types<double>::VecX>&, const Eigen::Ref<const Types<double>::VecX>&);
}  // namespace denoc
