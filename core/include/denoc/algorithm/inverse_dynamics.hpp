// Recursive inverse dynamics of the DeNOC formulation (Saha 1999, section 5.1).
#pragma once

#include "denoc/algorithm/tree.hpp"
#include "denoc/data.hpp"

namespace denoc {

/// Joint torques/forces tau = I(q) qdd + C(q, qd) qd + g(q) (+ armature * qdd), gravity from the model.
/// q, qd, qdd: n entries each. Result in data.tau (returned). O(n), no allocation.
/// Throws std::invalid_argument on a wrong size or a non-finite entry.
template <typename S>
const typename Types<S>::VecX& inverseDynamics(const ModelTpl<S>& model, DataTpl<S>& data,
                                               const Eigen::Ref<const typename Types<S>::VecX>& q,
                                               const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                               const Eigen::Ref<const typename Types<S>::VecX>& qdd);

/// As above with an external wrench [moment; force] applied by the environment on the last link,
/// expressed in the model's tip frame, moment about the tip frame's origin.
template <typename S>
const typename Types<S>::VecX& inverseDynamics(const ModelTpl<S>& model, DataTpl<S>& data,
                                               const Eigen::Ref<const typename Types<S>::VecX>& q,
                                               const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                               const Eigen::Ref<const typename Types<S>::VecX>& qdd,
                                               const typename Types<S>::Vec6& tip_wrench);

namespace detail {
/// The unchecked recursion (qdd == nullptr means qdd = 0; gravity off leaves the velocity terms only):
/// forward sweep of twists and twist rates, backward sweep of wrenches (inverse_dynamics.hxx). Writes
/// tau_out (n entries), the joint angles (data.cos_theta, data.sin_theta) and the per-joint records of data
/// (the wrench w_i transmitted by joint i, in F_i about O_i).
template <typename S>
void rnea(const ModelTpl<S>& model, DataTpl<S>& data, const Eigen::Ref<const typename Types<S>::VecX>& q,
          const Eigen::Ref<const typename Types<S>::VecX>& qd, const S* qdd,
          const typename Types<S>::Vec6* tip_wrench, bool gravity, typename Types<S>::VecX& tau_out);
}  // namespace detail

}  // namespace denoc

#include "denoc/algorithm/inverse_dynamics.hxx"

namespace denoc {
// instantiated for double in core/src/instantiate.cpp
extern template const Types<double>::VecX& inverseDynamics<double>(
    const Model&, Data&, const Eigen::Ref<const Types<double>::VecX>&,
    const Eigen::Ref<const Types<double>::VecX>&, const Eigen::Ref<const Types<double>::VecX>&);
extern template const Types<double>::VecX& inverseDynamics<double>(
    const Model&, Data&, const Eigen::Ref<const Types<double>::VecX>&,
    const Eigen::Ref<const Types<double>::VecX>&, const Eigen::Ref<const Types<double>::VecX>&,
    const Types<double>::Vec6&);
}  // namespace denoc
