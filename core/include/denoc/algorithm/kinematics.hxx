#pragma once

#include <stdexcept>
#include <string>
#include <type_traits>

#include "denoc/algorithm/check.hpp"
#include "denoc/sincos.hpp"

namespace denoc {
namespace detail {

/// The joint angles theta_i = theta0_i + q_i (revolute) or theta0_i (prismatic) and their cosines and sines,
/// all joints at once into data.theta, data.cos_theta, data.sin_theta (the sines and cosines of double
/// vectorize across joints). N > 0: model.n is N (withJointCount), the loops' bounds are constants.
template <int N = 0, typename S>
DENOC_INLINE void jointAngles(const ModelTpl<S>& model, DataTpl<S>& data,
                              const Eigen::Ref<const typename Types<S>::VecX>& q) {
  const int n = N > 0 ? N : model.n;
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
template <typename S, typename Rot>
DENOC_INLINE typename Types<S>::Vec3 jointOffset(const JointConstants<S>& jc, const Rot& R, const S& q_i) {
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

/// computeLocalPlacements without its checks (for the public algorithms, which checked q and data).
template <typename S>
void localPlacements(const ModelTpl<S>& model, DataTpl<S>& data,
                     const Eigen::Ref<const typename Types<S>::VecX>& q) {
  jointAngles(model, data, q);
  localPlacementsFromAngles(model, data, q);
}

/// computeCommonPlacements without its check.
template <typename S>
void commonPlacements(const ModelTpl<S>& model, DataTpl<S>& data) {
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

}  // namespace detail

template <typename S>
void computeLocalPlacements(const ModelTpl<S>& model, DataTpl<S>& data,
                            const Eigen::Ref<const typename Types<S>::VecX>& q) {
  detail::checkData(model, data, "computeLocalPlacements");
  detail::checkVector(model, q, "computeLocalPlacements", "q", kMaxPosition);
  detail::localPlacements(model, data, q);
}

template <typename S>
void computeCommonPlacements(const ModelTpl<S>& model, DataTpl<S>& data) {
  detail::checkData(model, data, "computeCommonPlacements");
  detail::commonPlacements(model, data);
}

template <typename S>
void tipPose(const ModelTpl<S>& model, const DataTpl<S>& data, typename Types<S>::Mat3& rotation,
             typename Types<S>::Vec3& origin) {
  const int last = model.n - 1;
  // R0 and O0 are in F_{-1}; base_rotation turns them into the user's base frame
  rotation = model.base_rotation * (data.R0[last] * model.tip_rotation);
  origin = model.base_rotation * (data.O0[last] + data.R0[last] * model.tip_origin);
}

// ------------------------------------------------------------------------------ user-frame kinematics

template <typename S>
int frameIndex(const ModelTpl<S>& model, const std::string& link) {
  if (link.empty()) return model.n;
  std::string names;
  for (int i = 0; i < model.n; ++i) {
    const std::string& name = model.spec.joints[static_cast<std::size_t>(i)].link;
    if (name == link) return i;
    names += (i ? ", '" : "'") + name + "'";
  }
  if (link == model.spec.root_link) return model.n + 1;
  throw std::invalid_argument("frameIndex: link '" + link + "' is not a moving link of model '" +
                              model.spec.name + "' (links: " + names + "; root link: '" +
                              model.spec.root_link + "'; empty name: the tip frame)");
}

namespace detail {

template <typename S>
void checkFrame(const ModelTpl<S>& model, int frame, const typename Types<S>::Vec3* point,
                const char* function) {
  if (frame < 0 || frame > model.n) {
    throw std::invalid_argument(std::string(function) + ": frame is " + std::to_string(frame) +
                                ", expected 0.." + std::to_string(model.n) + " (a link, or " +
                                std::to_string(model.n) + " for the tip frame)");
  }
  if constexpr (std::is_floating_point_v<S>) {
    if (point && !point->allFinite()) {
      throw std::invalid_argument(std::string(function) + ": point has a non-finite entry");
    }
  }
}

template <typename S>
DENOC_FLATTEN void kinematicSweep(const ModelTpl<S>& model, DataTpl<S>& data,
                                  const Eigen::Ref<const typename Types<S>::VecX>& q, int frame,
                                  bool all_frames) {
  using Mat3 = typename Types<S>::Mat3;
  using Vec3 = typename Types<S>::Vec3;
  const int k = frame < model.n ? frame : model.n - 1;
  jointAngles(model, data, q);
  // R: user base <- F_i, O: O_i in the user's base frame (F_{-1} is the user's base turned about z)
  Mat3 R = model.base_rotation;
  Vec3 O = Vec3::Zero();
  for (int i = 0; i <= k; ++i) {
    const JointConstants<S>& jc = model.joint[i];
    const JointRotation<S> Ri{jc.cos_alpha, jc.sin_alpha, data.cos_theta[i], data.sin_theta[i]};
    O += R * jointOffset(jc, Ri, S(q[i]));
    R = Ri.rightOf(R);
    data.kin_p[i] = O;
    data.kin_e[i] = R.col(2);
    if (all_frames || i == frame) data.kin_R[i] = R * model.axis_rotation[i].transpose().template cast<S>();
  }
  if (frame == model.n) {
    data.kin_R[frame] = R * model.tip_rotation;
    data.kin_p[frame] = O + R * model.tip_origin;
  }
}

template <typename S>
DENOC_FLATTEN typename Types<S>::Vec3 jacobianFromSweep(const ModelTpl<S>& model, DataTpl<S>& data, int frame,
                                                        const typename Types<S>::Vec3& point,
                                                        ReferenceFrame reference) {
  using Vec3 = typename Types<S>::Vec3;
  const int k = frame < model.n ? frame : model.n - 1;
  const typename Types<S>::Mat3& Rf = data.kin_R[frame];
  const Vec3 P = data.kin_p[frame] + Rf * point;
  auto& J = data.J;
  for (int j = 0; j <= k; ++j) {
    const Vec3& e = data.kin_e[j];
    Vec3 w, v;
    if (model.joint[j].revolute) {
      w = e;
      v = e.cross(P - data.kin_p[j]);
    } else {
      w.setZero();
      v = e;
    }
    if (reference == ReferenceFrame::Local) {
      w = Rf.transpose() * w;
      v = Rf.transpose() * v;
    }
    J.col(j) << w, v;
  }
  for (int j = k + 1; j < model.n; ++j) J.col(j).setZero();
  return P;
}

}  // namespace detail

template <typename S>
void forwardKinematics(const ModelTpl<S>& model, DataTpl<S>& data,
                       const Eigen::Ref<const typename Types<S>::VecX>& q) {
  if (!model.serial) return detail::treeForwardKinematics<S>(model, data, q, "forwardKinematics");
  detail::checkData(model, data, "forwardKinematics");
  detail::checkVector(model, q, "forwardKinematics", "q");
  detail::kinematicSweep(model, data, q, model.n, true);
}

template <typename S>
void framePlacement(const ModelTpl<S>& model, DataTpl<S>& data,
                    const Eigen::Ref<const typename Types<S>::VecX>& q, int frame,
                    typename Types<S>::Mat3& rotation, typename Types<S>::Vec3& origin) {
  if (!model.serial || frame < 0 || frame > model.n) {
    detail::treeForwardKinematics<S>(model, data, q, "framePlacement");
    detail::checkTreeFrame<S>(model, frame, nullptr, "framePlacement");
    rotation = data.kin_R[static_cast<std::size_t>(frame)];
    origin = data.kin_p[static_cast<std::size_t>(frame)];
    return;
  }
  detail::checkData(model, data, "framePlacement");
  detail::checkVector(model, q, "framePlacement", "q");
  detail::checkFrame<S>(model, frame, nullptr, "framePlacement");
  detail::kinematicSweep(model, data, q, frame, false);
  rotation = data.kin_R[frame];
  origin = data.kin_p[frame];
}

template <typename S>
const Eigen::Matrix<S, 6, Eigen::Dynamic>& computeFrameJacobian(
    const ModelTpl<S>& model, DataTpl<S>& data, const Eigen::Ref<const typename Types<S>::VecX>& q, int frame,
    const typename Types<S>::Vec3& point, ReferenceFrame reference) {
  if (!model.serial || frame < 0 || frame > model.n)
    return detail::treeFrameJacobian<S>(model, data, q, frame, point, reference, "computeFrameJacobian");
  detail::checkData(model, data, "computeFrameJacobian");
  detail::checkVector(model, q, "computeFrameJacobian", "q");
  detail::checkFrame<S>(model, frame, &point, "computeFrameJacobian");
  detail::kinematicSweep(model, data, q, frame, false);
  detail::jacobianFromSweep(model, data, frame, point, reference);
  return data.J;
}

template <typename S>
DENOC_FLATTEN const typename Types<S>::Vec6& computeFrameJdotQd(
    const ModelTpl<S>& model, DataTpl<S>& data, const Eigen::Ref<const typename Types<S>::VecX>& q,
    const Eigen::Ref<const typename Types<S>::VecX>& qd, int frame, const typename Types<S>::Vec3& point,
    ReferenceFrame reference) {
  using Vec3 = typename Types<S>::Vec3;
  if (!model.serial || frame < 0 || frame > model.n)
    return detail::treeFrameJdotQd<S>(model, data, q, qd, frame, point, reference, "computeFrameJdotQd");
  detail::checkData(model, data, "computeFrameJdotQd");
  detail::checkVectors(model, "computeFrameJdotQd", q, "q", qd, "qd", qd, "qd");
  detail::checkFrame<S>(model, frame, &point, "computeFrameJdotQd");
  detail::kinematicSweep(model, data, q, frame, false);
  const Vec3 P = detail::jacobianFromSweep(model, data, frame, point, reference);
  // classical velocities and accelerations at qdd = 0, no gravity, base axes: link angular velocity w and
  // acceleration wd, velocity v and acceleration a of the origin O_j
  const int k = frame < model.n ? frame : model.n - 1;
  Vec3 w = Vec3::Zero(), wd = Vec3::Zero(), v = Vec3::Zero(), a = Vec3::Zero(), O = Vec3::Zero();
  for (int j = 0; j <= k; ++j) {
    const Vec3 d = data.kin_p[j] - O;  // O_{j-1} to O_j on link j-1
    O = data.kin_p[j];
    v += w.cross(d);
    a += wd.cross(d) + w.cross(w.cross(d));
    const Vec3 eq = data.kin_e[j] * S(qd[j]);
    if (model.joint[j].revolute) {
      wd += w.cross(eq);
      w += eq;
    } else {
      a += S(2) * w.cross(eq);
      v += eq;
    }
  }
  const Vec3 r = P - O;
  const Vec3 wr = w.cross(r);
  const Vec3 a_P = a + wd.cross(r) + w.cross(wr);
  if (reference == ReferenceFrame::Base) {
    data.Jdot_qd << wd, a_P;
  } else {
    const typename Types<S>::Mat3& Rf = data.kin_R[frame];
    const Vec3 v_P = v + wr;
    data.Jdot_qd << Rf.transpose() * wd, Rf.transpose() * (a_P - w.cross(v_P));
  }
  return data.Jdot_qd;
}

}  // namespace denoc
