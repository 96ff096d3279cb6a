// The centroidal quantities of centroidal.hpp (eq. C.1-C.3).
#pragma once

#include "denoc/algorithm/centroidal.hpp"

namespace denoc {
namespace detail {

/// The momentum shifted from the world origin to the point c: [n - c x f; f].
template <typename S>
typename Types<S>::Vec6 shiftMomentum(const typename Types<S>::Vec6& h, const typename Types<S>::Vec3& c) {
  typename Types<S>::Vec6 out;
  out << h.template head<3>() - c.cross(h.template tail<3>()), h.template tail<3>();
  return out;
}

/// Placements and composite inertias (treeCrba's), then mass and com; data.Ag's columns before the shift.
template <typename S>
void centroidalColumns(const ModelTpl<S>& model, DataTpl<S>& data,
                       const Eigen::Ref<const typename Types<S>::VecX>& q, const char* function) {
  using Vec6 = typename Types<S>::Vec6;
  checkData(model, data, function, true);
  checkConfigurationVector(model, q, function, "q");
  treePlacements(model, data, q);
  const int n = model.n;
  const int nr = model.nr;
  const auto un = static_cast<std::size_t>(n);
  for (int i = 0; i <= n; ++i)
    data.tr_Mc[static_cast<std::size_t>(i)] = data.tr_M[static_cast<std::size_t>(i)];
  for (int i = n - 1; i >= 0; --i) {
    const auto ui = static_cast<std::size_t>(i);
    data.tr_Mc[static_cast<std::size_t>(treeSlot(n, model.parent[ui]))] += data.tr_Mc[ui];
    data.Ag.col(nr + i) = data.tr_Mc[ui] * data.p0[ui];
  }
  for (int a = 0; a < nr; ++a) data.Ag.col(a) = data.tr_Mc[un] * Vec6(data.root_S.col(a));
  data.mass = data.tr_Mc[un].m;
  data.com = data.tr_Mc[un].h / data.mass;
}

}  // namespace detail

template <typename S>
const typename Types<S>::Vec3& computeCenterOfMass(const ModelTpl<S>& model, DataTpl<S>& data,
                                                   const Eigen::Ref<const typename Types<S>::VecX>& q) {
  detail::checkData(model, data, "computeCenterOfMass", true);
  detail::checkConfigurationVector(model, q, "computeCenterOfMass", "q");
  detail::treePlacements(model, data, q);
  S m = S(0);
  typename Types<S>::Vec3 h = Types<S>::Vec3::Zero();
  for (const RigidInertia<S>& M : data.tr_M) {
    m += M.m;
    h += M.h;
  }
  data.mass = m;
  data.com = h / m;
  detail::checkOutput<S>(data.com, "computeCenterOfMass", "com");
  return data.com;
}

template <typename S>
const Eigen::Matrix<S, 3, Eigen::Dynamic>& computeCenterOfMassJacobian(
    const ModelTpl<S>& model, DataTpl<S>& data, const Eigen::Ref<const typename Types<S>::VecX>& q) {
  detail::centroidalColumns(model, data, q, "computeCenterOfMassJacobian");
  data.Jcom = data.Ag.template bottomRows<3>() / data.mass;
  detail::checkOutput<S>(data.Jcom, "computeCenterOfMassJacobian", "Jcom");
  return data.Jcom;
}

template <typename S>
const Eigen::Matrix<S, 6, Eigen::Dynamic>& computeCentroidalMap(
    const ModelTpl<S>& model, DataTpl<S>& data, const Eigen::Ref<const typename Types<S>::VecX>& q) {
  detail::centroidalColumns(model, data, q, "computeCentroidalMap");
  data.Jcom = data.Ag.template bottomRows<3>() / data.mass;
  for (int k = 0; k < model.nv; ++k)
    data.Ag.col(k) = detail::shiftMomentum<S>(typename Types<S>::Vec6(data.Ag.col(k)), data.com);
  detail::checkOutput<S>(data.Ag, "computeCentroidalMap", "Ag");
  return data.Ag;
}

template <typename S>
const typename Types<S>::Vec6& computeCentroidalMapTimeVariation(
    const ModelTpl<S>& model, DataTpl<S>& data, const Eigen::Ref<const typename Types<S>::VecX>& q,
    const Eigen::Ref<const typename Types<S>::VecX>& v) {
  computeCentroidalMap(model, data, q);
  detail::checkVector(model, v, "computeCentroidalMapTimeVariation", "v");
  data.hg = data.Ag * v;
  detail::treeForwardSweep<S>(model, data, v, nullptr, false, nullptr, 0);
  typename Types<S>::Vec6 hdot = Types<S>::Vec6::Zero();
  for (const auto& w : data.tr_w) hdot += w;
  data.dAg_v = detail::shiftMomentum<S>(hdot, data.com);
  detail::checkOutput<S>(data.dAg_v, "computeCentroidalMapTimeVariation", "dAg_v");
  return data.dAg_v;
}

}  // namespace denoc
