#pragma once

#include "denoc/algorithm/check.hpp"
#include "denoc/algorithm/kinematics.hpp"

namespace denoc {
namespace detail {

template <typename S>
void rnea(const ModelTpl<S>& model, DataTpl<S>& data, const Eigen::Ref<const typename Types<S>::VecX>& q,
          const Eigen::Ref<const typename Types<S>::VecX>& qd, const S* qdd,
          const typename Types<S>::Vec6* tip_wrench, bool gravity, typename Types<S>::VecX& tau_out) {
  using Vec3 = typename Types<S>::Vec3;
  const int n = model.n;
  computeLocalPlacements(model, data, q);

  // forward sweep: t_i = B_{i,i-1} t_{i-1} + p_i qd_i and
  // tdot_i = B_{i,i-1} tdot_{i-1} + Bdot_{i,i-1} t_{i-1} + p_i qdd_i + Omega_i p_i qd_i, with
  // tdot_0 = [0; -g] (eq. 32). Only angular velocities are needed: the wrenches use w_i, wd_i and the
  // acceleration vd_i of the mass center.
  Vec3 w_prev = Vec3::Zero();
  Vec3 wd_prev = Vec3::Zero();
  Vec3 vd_prev = gravity ? Vec3(-model.gravity) : Vec3::Zero();
  for (int i = 0; i < n; ++i) {
    const auto& R = data.R[i];
    const Vec3& rho = data.rho[i];
    const Vec3& c = model.com[i];
    const S qdd_i = qdd ? qdd[i] : S(0);
    // acceleration of O_i as a point of link i-1, then everything in F_i
    const Vec3 a_o_prev = vd_prev + wd_prev.cross(rho) + w_prev.cross(w_prev.cross(rho));
    const Vec3 w_p = R.transpose() * w_prev;
    Vec3 a_o = R.transpose() * a_o_prev;
    Vec3 w = w_p;
    Vec3 wd = R.transpose() * wd_prev;
    if (model.type[i] == JointType::Revolute) {
      // p_i = [e; e x d], Omega_i p_i qd_i = [w_{i-1} x e qd; ...]
      w.z() += qd[i];
      wd.x() += w_p.y() * qd[i];
      wd.y() -= w_p.x() * qd[i];
      wd.z() += qdd_i;
    } else {
      // p_i = [0; e]: Coriolis 2 w x e qd and the joint acceleration along e
      a_o.x() += S(2) * w_p.y() * qd[i];
      a_o.y() -= S(2) * w_p.x() * qd[i];
      a_o.z() += qdd_i;
    }
    data.w[i] = w;
    data.wd[i] = wd;
    data.vd[i] = a_o + wd.cross(c) + w.cross(w.cross(c));
    w_prev = w;
    wd_prev = wd;
    vd_prev = data.vd[i];
  }

  // backward sweep: w_i = M_i tdot_i + Mdot_i t_i + B_{i+1,i}^T w_{i+1}, kept as its force and its
  // moment about O_i; tau_i = p_i^T w_i
  for (int i = n - 1; i >= 0; --i) {
    const auto& I = model.inertia[i];
    const Vec3& c = model.com[i];
    const Vec3& w = data.w[i];
    Vec3 f = model.mass[i] * data.vd[i];
    Vec3 n_o = I * data.wd[i] + w.cross(I * w) + c.cross(f);
    if (i + 1 < n) {
      const auto& R = data.R[i + 1];
      const Vec3 f_child = R * data.f[i + 1];
      const Vec3 o_child = data.rho[i + 1] + c;  // O_{i+1} - O_i in F_i
      f += f_child;
      n_o += R * data.n_o[i + 1] + o_child.cross(f_child);
    } else if (tip_wrench) {
      // the environment's wrench on the last link, moved from the tip frame to O_{n-1}
      const Vec3 f_ext = model.tip_rotation * tip_wrench->template tail<3>();
      f -= f_ext;
      n_o -= model.tip_rotation * tip_wrench->template head<3>() + model.tip_origin.cross(f_ext);
    }
    data.f[i] = f;
    data.n_o[i] = n_o;
    tau_out[i] = model.type[i] == JointType::Revolute ? n_o.z() : f.z();
    if (qdd) tau_out[i] += model.armature[i] * qdd[i];
  }
}

}  // namespace detail

template <typename S>
const typename Types<S>::VecX& inverseDynamics(const ModelTpl<S>& model, DataTpl<S>& data,
                                               const Eigen::Ref<const typename Types<S>::VecX>& q,
                                               const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                               const Eigen::Ref<const typename Types<S>::VecX>& qdd) {
  detail::checkVector(model, q, "inverseDynamics", "q");
  detail::checkVector(model, qd, "inverseDynamics", "qd");
  detail::checkVector(model, qdd, "inverseDynamics", "qdd");
  detail::rnea<S>(model, data, q, qd, qdd.data(), nullptr, true, data.tau);
  return data.tau;
}

template <typename S>
const typename Types<S>::VecX& inverseDynamics(const ModelTpl<S>& model, DataTpl<S>& data,
                                               const Eigen::Ref<const typename Types<S>::VecX>& q,
                                               const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                               const Eigen::Ref<const typename Types<S>::VecX>& qdd,
                                               const typename Types<S>::Vec6& tip_wrench) {
  detail::checkVector(model, q, "inverseDynamics", "q");
  detail::checkVector(model, qd, "inverseDynamics", "qd");
  detail::checkVector(model, qdd, "inverseDynamics", "qdd");
  if constexpr (std::is_floating_point_v<S>) {
    if (!tip_wrench.allFinite()) {
      throw std::invalid_argument("inverseDynamics: tip_wrench has a non-finite entry");
    }
  }
  detail::rnea<S>(model, data, q, qd, qdd.data(), &tip_wrench, true, data.tau);
  return data.tau;
}

}  // namespace denoc
