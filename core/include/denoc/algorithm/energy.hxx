#pragma once

#include <Eigen/Geometry>

#include "denoc/algorithm/check.hpp"
#include "denoc/algorithm/kinematics.hpp"

namespace denoc {
namespace detail {

template <typename S>
S kineticEnergyFromPlacements(const ModelTpl<S>& model, const DataTpl<S>& data,
                              const Eigen::Ref<const typename Types<S>::VecX>& qd) {
  using Vec3 = typename Types<S>::Vec3;
  // The twist of link i referred to the base origin, in base axes, is the sum of p_j qd_j over the joints
  // j <= i (the common-frame form of t_i = B_{i,i-1} t_{i-1} + p_i qd_i). Its angular part is w_i; the
  // velocity of the mass center is v_O + w_i x C_i.
  Vec3 w = Vec3::Zero();
  Vec3 v_o = Vec3::Zero();
  S twice = S(0);
  for (int i = 0; i < model.n; ++i) {
    w += data.p0[i].template head<3>() * qd[i];
    v_o += data.p0[i].template tail<3>() * qd[i];
    const Vec3 v_c = v_o + w.cross(data.C0[i]);
    const Vec3 w_local = data.R0[i].transpose() * w;  // F_i axes, where the inertia is given
    twice += model.mass[i] * v_c.squaredNorm() + w_local.dot(model.inertia[i] * w_local) +
             model.armature[i] * qd[i] * qd[i];
  }
  return twice / S(2);
}

template <typename S>
S potentialEnergyFromPlacements(const ModelTpl<S>& model, const DataTpl<S>& data) {
  S v = S(0);
  for (int i = 0; i < model.n; ++i)
    v -= model.mass[i] * model.gravity_base.dot(data.C0[i]);  // both in F_{-1}
  return v;
}

}  // namespace detail

template <typename S>
S kineticEnergy(const ModelTpl<S>& model, DataTpl<S>& data,
                const Eigen::Ref<const typename Types<S>::VecX>& q,
                const Eigen::Ref<const typename Types<S>::VecX>& qd) {
  if (!model.serial) {
    S kinetic, potential;
    detail::treeEnergies<S>(model, data, q, qd, kinetic, potential, "kineticEnergy");
    return kinetic;
  }
  detail::checkData(model, data, "kineticEnergy");
  detail::checkVector(model, q, "kineticEnergy", "q", kMaxPosition);
  detail::checkVector(model, qd, "kineticEnergy", "qd");
  detail::localPlacements(model, data, q);
  detail::commonPlacements(model, data);
  const S kinetic = detail::kineticEnergyFromPlacements(model, data, qd);
  detail::checkScalar<S>(kinetic, "kineticEnergy", "kinetic energy");
  return kinetic;
}

template <typename S>
S potentialEnergy(const ModelTpl<S>& model, DataTpl<S>& data,
                  const Eigen::Ref<const typename Types<S>::VecX>& q) {
  if (!model.serial) {
    S kinetic, potential;
    detail::treeEnergies<S>(model, data, q, data.zeros.head(model.nv), kinetic, potential, "potentialEnergy");
    return potential;
  }
  detail::checkData(model, data, "potentialEnergy");
  detail::checkVector(model, q, "potentialEnergy", "q", kMaxPosition);
  detail::localPlacements(model, data, q);
  detail::commonPlacements(model, data);
  const S potential = detail::potentialEnergyFromPlacements(model, data);
  detail::checkScalar<S>(potential, "potentialEnergy", "potential energy");
  return potential;
}

template <typename S>
S mechanicalEnergy(const ModelTpl<S>& model, DataTpl<S>& data,
                   const Eigen::Ref<const typename Types<S>::VecX>& q,
                   const Eigen::Ref<const typename Types<S>::VecX>& qd, S& kinetic, S& potential) {
  if (!model.serial) {
    detail::treeEnergies<S>(model, data, q, qd, kinetic, potential, "mechanicalEnergy");
    return kinetic + potential;
  }
  detail::checkData(model, data, "mechanicalEnergy");
  detail::checkVector(model, q, "mechanicalEnergy", "q", kMaxPosition);
  detail::checkVector(model, qd, "mechanicalEnergy", "qd");
  detail::localPlacements(model, data, q);
  detail::commonPlacements(model, data);
  kinetic = detail::kineticEnergyFromPlacements(model, data, qd);
  potential = detail::potentialEnergyFromPlacements(model, data);
  detail::checkScalar<S>(kinetic + potential, "mechanicalEnergy", "energy");
  return kinetic + potential;
}

}  // namespace denoc
