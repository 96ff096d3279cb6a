// The matrix of convective inertia terms C(q, qd) of the DeNOC formulation (Saha 1999, eq. 25-29), and the
// bias terms C(q, qd) qd, g(q) and their sum. Equations of motion: I(q) qdd + C(q, qd) qd + g(q) = tau.
#pragma once

#include "denoc/algorithm/tree.hpp"
#include "denoc/data.hpp"

namespace denoc {

/// Saha's matrix of convective inertia terms, C = N^T (M Ndot + Mdot N) (eq. 20, 25-29), n x n, into
/// data.C (returned). q, qd: n entries each. O(n^2), no allocation. Throws std::invalid_argument on a wrong
/// size or a non-finite entry.
///
/// C is not unique as a matrix (only C qd is); this one satisfies
///  - C(q, qd) qd = the velocity part of the bias (inverse dynamics with qdd = 0 and no gravity);
///  - C is linear in qd;
///  - dI/dt = C + C^T, i.e. dI/dt - 2C is skew-symmetric.
/// It may differ from the Christoffel-symbol matrix by a skew-symmetric D(q, qd) with D qd = 0.
/// Computed in the common frame (base axes, base origin), where B_ij = 1; see convective.hxx. Also leaves
/// the composite-body inertias data.Mt, data.Mtp (as computeInertiaMatrix does, without forming I) and the
/// common-frame twists data.cv_t.
template <typename S>
const typename Types<S>::MatX& computeConvectiveMatrix(const ModelTpl<S>& model, DataTpl<S>& data,
                                                       const Eigen::Ref<const typename Types<S>::VecX>& q,
                                                       const Eigen::Ref<const typename Types<S>::VecX>& qd);

/// The velocity part of the bias, C(q, qd) qd (inverse dynamics with qdd = 0 and gravity off), into
/// data.cqd (returned). O(n). Throws on a bad argument.
template <typename S>
const typename Types<S>::VecX& computeVelocityBias(const ModelTpl<S>& model, DataTpl<S>& data,
                                                   const Eigen::Ref<const typename Types<S>::VecX>& q,
                                                   const Eigen::Ref<const typename Types<S>::VecX>& qd);

/// The bias vector C(q, qd) qd + g(q) (inverse dynamics with qdd = 0; no armature term) into data.bias
/// (returned). O(n). Throws on a bad argument.
template <typename S>
const typename Types<S>::VecX& computeBias(const ModelTpl<S>& model, DataTpl<S>& data,
                                           const Eigen::Ref<const typename Types<S>::VecX>& q,
                                           const Eigen::Ref<const typename Types<S>::VecX>& qd);

/// The gravity torques g(q) = ID(q, 0, 0) with the model's gravity, into data.g (returned). O(n).
/// Throws on a bad q.
template <typename S>
const typename Types<S>::VecX& computeGravity(const ModelTpl<S>& model, DataTpl<S>& data,
                                              const Eigen::Ref<const typename Types<S>::VecX>& q);

namespace detail {
/// C(q, qd) from placements already computed (local and common), unchecked.
template <typename S>
void convective(const ModelTpl<S>& model, DataTpl<S>& data,
                const Eigen::Ref<const typename Types<S>::VecX>& qd);
}  // namespace detail

}  // namespace denoc

#include "denoc/algorithm/convective.hxx"

namespace denoc {
// instantiated for double in core/src/instantiate_convective_fixman.cpp
extern template const Types<double>::MatX& computeConvectiveMatrix<double>(
    const Model&, Data&, const Eigen::Ref<const Types<double>::VecX>&,
    const Eigen::Ref<const Types<double>::VecX>&);
extern template const Types<double>::VecX& computeVelocityBias<double>(
    const Model&, Data&, const Eigen::Ref<const Types<double>::VecX>&,
    const Eigen::Ref<const Types<double>::VecX>&);
extern template const Types<double>::VecX& computeBias<double>(const Model&, Data&,
                                                               const Eigen::Ref<const Types<double>::VecX>&,
                                                               const Eigen::Ref<const Types<double>::VecX>&);
extern template const Types<double>::VecX& computeGravity<double>(
    const Model&, Data&, const Eigen::Ref<const Types<double>::VecX>&);
}  // namespace denoc
