#pragma once

#include "denoc/sincos.hpp"

namespace denoc {
namespace detail {

/// The joint angles theta_i = theta0_i + q_i (revolute) or theta0_i (prismatic) and their cosines and sines,
/// all joints at once into data.theta, data.cos_theta, data.sin_theta (the sines and cosines of double
/// vectorize across joints).
template <typename S>
DENOC_INLINE void jointAngles(const ModelTpl<S>& model, DataTpl<S>& data,
                              const Eigen::Ref<const typename Types<S>::VecX>& q) {
  const int n = model.n;
  const JointConstants<S>* joint = model.joint.data();
  S* theta = data.theta.data();
  for (int i = 0; i < n; ++i) theta[i] = joint[i].theta0 + q[i];
  sincos(theta, data.sin_theta.data(), data.cos_theta.data(), n);
  if (!model.has_prismatic) return;
  for (int i = 0; i < n; ++i) {
    if (!joint[i].revolute) {
      data.cos_theta[i] = joint[i].cos_theta0;
      data.sin_theta[i] = joint[i].sin_theta0;
    }
  }
}

/// O_i in F_{i-1}: s_i, moved along the joint axis R_i z by q_i for a prismatic joint.
template <typename S>
DENOC_INLINE typename Types<S>::Vec3 jointOffset(const JointConstants<S>& jc, const JointRotation<S>& R,
                                                 const S& q_i) {
  if (jc.revolute) return jc.s;
  return jc.s + R.axis() * q_i;
}

/// computeLocalPlacements with the joint angles already in data.cos_theta, data.sin_theta.
template <typename S>
void localPlacementsFromAngles(const ModelTpl<S>& model, DataTpl<S>& data,
                               const Eigen::Ref<const typename Types<S>::VecX>& q) {
  using Vec3 = typename Types<S>::Vec3;
  for (int i = 0; i < model.n; ++i) {
    const JointConstants<S>& jc = model.joint[i];
    const JointRotation<S> R{jc.cos_alpha, jc.sin_alpha, data.cos_theta[i], data.sin_theta[i]};
    data.R[i] = R.matrix();
    const Vec3 com_parent = i == 0 ? Vec3::Zero() : model.com[i - 1];
    data.rho[i] = detail::jointOffset(jc, R, S(q[i])) - com_parent;
  }
}

}  // namespace detail

template <typename S>
void computeLocalPlacements(const ModelTpl<S>& model, DataTpl<S>& data,
                            const Eigen::Ref<const typename Types<S>::VecX>& q) {
  detail::jointAngles(model, data, q);
  detail::localPlacementsFromAngles(model, data, q);
}

template <typename S>
void computeCommonPlacements(const ModelTpl<S>& model, DataTpl<S>& data) {
  using Vec3 = typename Types<S>::Vec3;
  for (int i = 0; i < model.n; ++i) {
    if (i == 0) {
      data.R0[0] = data.R[0];
      data.O0[0] = data.rho[0];
    } else {
      data.R0[i] = data.R0[i - 1] * data.R[i];
      data.O0[i] = data.C0[i - 1] + data.R0[i - 1] * data.rho[i];
    }
    data.C0[i] = data.O0[i] + data.R0[i] * model.com[i];
    const Vec3 e = data.R0[i].col(2);
    if (model.type[i] == JointType::Revolute) {
      data.p0[i] << e, data.O0[i].cross(e);
    } else {
      data.p0[i] << Vec3::Zero(), e;
    }
  }
}

template <typename S>
void tipPose(const ModelTpl<S>& model, const DataTpl<S>& data, typename Types<S>::Mat3& rotation,
             typename Types<S>::Vec3& origin) {
  const int last = model.n - 1;
  // R0 and O0 are in F_{-1}; base_rotation turns them into the user's base frame
  rotation = model.base_rotation * (data.R0[last] * model.tip_rotation);
  origin = model.base_rotation * (data.O0[last] + data.R0[last] * model.tip_origin);
}

}  // namespace denoc
