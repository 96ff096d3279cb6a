#pragma once

#include "denoc/algorithm/check.hpp"
#include "denoc/algorithm/kinematics.hpp"

namespace denoc {
namespace detail {

/// A link's motion (w, wd, the acceleration a of its origin, all in its frame) into `state` with K = Wd + W
/// W, and its Newton-Euler wrench about its origin into wk.f, wk.n (eq. 8 at O_i): force m a + K h, moment
/// I_o wd + w x I_o w + h x a, with h = m d the first moment and I_o the inertia about the origin.
template <typename S>
DENOC_INLINE void linkMotion(const JointConstants<S>& jc, const typename Types<S>::Vec3& w,
                             const typename Types<S>::Vec3& wd, const typename Types<S>::Vec3& a,
                             MotionState<S>& state, JointWork<S>& wk) {
  // K = Wd + W W, W W = w w^T - |w|^2 1
  const S xx = w.x() * w.x(), yy = w.y() * w.y(), zz = w.z() * w.z();
  const S xy = w.x() * w.y(), xz = w.x() * w.z(), yz = w.y() * w.z();
  state.K << -(yy + zz), xy - wd.z(), xz + wd.y(),  //
      xy + wd.z(), -(xx + zz), yz - wd.x(),         //
      xz - wd.y(), yz + wd.x(), -(xx + yy);
  wk.f = jc.m * a + state.K * jc.h;
  wk.n = jc.I_o * wd + w.cross(jc.I_o * w) + jc.h.cross(a);
  state.w = w;
  state.wd = wd;
  state.a = a;
}

/// Forward step of the inverse dynamics at joint i (section 5.1 in F_i about O_i): from the motion of link
/// i-1 (a tree: the parent; `in`, of which only `in.a` is read for i = 0, where the base is at rest) and the
/// joint rotation R_i (JointRotation, or a tree's TreeJointRotation), the motion of link i into `out` (which
/// may be `in`) and link i's Newton-Euler wrench about O_i into wk.f, wk.n; also wk.s_q.
///   t_i = B_{i,i-1} t_{i-1} + p_i qd_i,
///   tdot_i = B_{i,i-1} tdot_{i-1} + Bdot_{i,i-1} t_{i-1} + p_i qdd_i + Omega_i p_i qd_i      (eq. 12, 31)
/// whose linear part at O_i is a_{i-1} + K_{i-1} s_i (then rotated into F_i by R_i^T), and
///   w_i^link = M_i tdot_i + Mdot_i t_i: force m a + K h, moment I_o wd + w x I_o w + h x a   (eq. 8 at O_i)
/// with h = m d the first moment and I_o the inertia about O_i. 83 multiplications (56 for i = 0).
template <typename S, typename Rot>
DENOC_INLINE void idForwardStep(const JointConstants<S>& jc, const Rot& R, JointWork<S>& wk,
                                const MotionState<S>& in, MotionState<S>& state, const S& q_i, const S& qd_i,
                                const S& qdd_i, bool first) {
  using Vec3 = typename Types<S>::Vec3;
  wk.s_q = jointOffset<S>(jc, R, q_i);
  Vec3 w, wd, a;
  if (first) {
    w.setZero();
    wd.setZero();
    a = R.transposeTimes(in.a);
  } else {
    w = R.transposeTimes(in.w);
    wd = R.transposeTimes(in.wd);
    a = R.transposeTimes(Vec3(in.a + in.K * wk.s_q));
    if (jc.revolute) {
      // Omega_i p_i qd_i: w_{i-1} x z qd_i
      wd.x() += w.y() * qd_i;
      wd.y() -= w.x() * qd_i;
    } else {
      // Coriolis acceleration 2 w_{i-1} x z qd_i of the sliding origin
      const S two_qd = S(2) * qd_i;
      a.x() += w.y() * two_qd;
      a.y() -= w.x() * two_qd;
    }
  }
  if (jc.revolute) {
    w.z() += qd_i;
    wd.z() += qdd_i;
  } else {
    a.z() += qdd_i;
  }
  linkMotion(jc, w, wd, a, state, wk);
}

/// Backward step of the inverse dynamics: w_i += B_{i+1,i}^T w_{i+1} (R = R_{i+1}, child = record of joint
/// i+1, or null for the last joint; a tree: one child's), i.e. the child's force rotated into
/// F_i, its moment rotated and moved from O_{i+1} to O_i (22 multiplications). Returns tau_i = p_i^T w_i
/// without armature: the z component of the moment (revolute) or of the force (prismatic).
template <typename S, typename Rot>
DENOC_INLINE S idBackwardStep(const JointConstants<S>& jc, JointWork<S>& wk, const Rot& R,
                              const JointWork<S>* child) {
  using Vec3 = typename Types<S>::Vec3;
  if (child) {
    const Vec3 f_child = R * child->f;
    wk.f += f_child;
    wk.n += R * child->n + child->s_q.cross(f_child);
  }
  return jc.revolute ? wk.n.z() : wk.f.z();
}

template <typename S>
DENOC_FLATTEN void rnea(const ModelTpl<S>& model, DataTpl<S>& data,
                        const Eigen::Ref<const typename Types<S>::VecX>& q,
                        const Eigen::Ref<const typename Types<S>::VecX>& qd, const S* qdd,
                        const typename Types<S>::Vec6* tip_wrench, bool gravity,
                        typename Types<S>::VecX& tau_out) {
  using Vec3 = typename Types<S>::Vec3;
  const int n = model.n;
  const JointConstants<S>* joint = model.joint.data();
  JointWork<S>* work = data.work.data();

  // forward sweep with tdot_{-1} = [0; -g] (eq. 32)
  jointAngles(model, data, q);
  const S* c = data.cos_theta.data();
  const S* s = data.sin_theta.data();
  MotionState<S> state;
  state.a = gravity ? Vec3(-model.gravity_base) : Vec3::Zero();
  for (int i = 0; i < n; ++i) {
    const JointRotation<S> R{joint[i].cos_alpha, joint[i].sin_alpha, c[i], s[i]};
    idForwardStep(joint[i], R, work[i], state, state, S(q[i]), S(qd[i]), qdd ? qdd[i] : S(0), i == 0);
  }

  // backward sweep; the environment's wrench on the last link is moved from the tip frame to O_{n-1}
  if (tip_wrench) {
    JointWork<S>& last = work[n - 1];
    const Vec3 f_ext = model.tip_rotation * tip_wrench->template tail<3>();
    last.f -= f_ext;
    last.n -= model.tip_rotation * tip_wrench->template head<3>() + model.tip_origin.cross(f_ext);
  }
  for (int i = n - 1; i >= 0; --i) {
    const bool last = i + 1 == n;
    const int j = last ? i : i + 1;  // the child (unused for the last joint)
    const JointRotation<S> R{joint[j].cos_alpha, joint[j].sin_alpha, c[j], s[j]};
    tau_out[i] = idBackwardStep(joint[i], work[i], R, last ? nullptr : &work[i + 1]);
    if (qdd) tau_out[i] += joint[i].armature * qdd[i];
  }
}

}  // namespace detail

template <typename S>
const typename Types<S>::VecX& inverseDynamics(const ModelTpl<S>& model, DataTpl<S>& data,
                                               const Eigen::Ref<const typename Types<S>::VecX>& q,
                                               const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                               const Eigen::Ref<const typename Types<S>::VecX>& qdd) {
  if (!model.serial)
    return detail::treeInverseDynamics<S>(model, data, q, qd, qdd, nullptr, 0, "inverseDynamics");
  detail::checkData(model, data, "inverseDynamics");
  detail::checkVectors(model, "inverseDynamics", q, "q", qd, "qd", qdd, "qdd");
  detail::rnea<S>(model, data, q, qd, qdd.data(), nullptr, true, data.tau);
  detail::checkOutput<S>(data.tau, "inverseDynamics", "tau");
  return data.tau;
}

template <typename S>
const typename Types<S>::VecX& inverseDynamics(const ModelTpl<S>& model, DataTpl<S>& data,
                                               const Eigen::Ref<const typename Types<S>::VecX>& q,
                                               const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                               const Eigen::Ref<const typename Types<S>::VecX>& qdd,
                                               const typename Types<S>::Vec6& tip_wrench) {
  if (!model.serial) {
    const ExternalWrenchTpl<S> tip{model.n, tip_wrench, ReferenceFrame::Local};
    return detail::treeInverseDynamics<S>(model, data, q, qd, qdd, &tip, 1, "inverseDynamics");
  }
  detail::checkData(model, data, "inverseDynamics");
  detail::checkVectors(model, "inverseDynamics", q, "q", qd, "qd", qdd, "qdd");
  detail::checkEntries<S>(tip_wrench, "inverseDynamics", "tip_wrench");
  detail::rnea<S>(model, data, q, qd, qdd.data(), &tip_wrench, true, data.tau);
  detail::checkOutput<S>(data.tau, "inverseDynamics", "tau");
  return data.tau;
}

}  // namespace denoc
