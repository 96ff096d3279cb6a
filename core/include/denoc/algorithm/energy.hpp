// Mechanical energy of the chain: kinetic energy 1/2 qd^T I(q) qd in O(n) from the link twists, and the
// gravitational potential energy -sum_i m_i g . C_i(q). Used by the simulator to report energy so that
// drift can be seen, and by the tests as a conservation-law oracle.
#pragma once

#include "denoc/algorithm/tree.hpp"
#include "denoc/data.hpp"

namespace denoc {

/// Kinetic energy T = 1/2 qd^T I(q) qd (armature included: + 1/2 J_i qd_i^2), computed in O(n) as
/// sum_i 1/2 (m_i |v_i|^2 + w_i^T I_i w_i) from the twists of the mass centers (a forward pass of its own,
/// not the inertia matrix). Leaves the common-frame placements of q in data. No allocation.
/// Throws std::invalid_argument on a wrong size or a non-finite entry.
template <typename S>
S kineticEnergy(const ModelTpl<S>& model, DataTpl<S>& data,
                const Eigen::Ref<const typename Types<S>::VecX>& q,
                const Eigen::Ref<const typename Types<S>::VecX>& qd);

/// Gravitational potential energy V = -sum_i m_i g . C_i(q), zero when every mass center is at the base
/// origin's level (C_i measured from the base origin, g the model's gravity in the base frame).
/// Leaves the common-frame placements of q in data. No allocation. Throws like kineticEnergy.
template <typename S>
S potentialEnergy(const ModelTpl<S>& model, DataTpl<S>& data,
                  const Eigen::Ref<const typename Types<S>::VecX>& q);

/// Both energies with one placement pass; returns the total T + V.
template <typename S>
S mechanicalEnergy(const ModelTpl<S>& model, DataTpl<S>& data,
                   const Eigen::Ref<const typename Types<S>::VecX>& q,
                   const Eigen::Ref<const typename Types<S>::VecX>& qd, S& kinetic, S& potential);

namespace detail {
/// Unchecked versions: they assume the common-frame placements of q are already in data.
template <typename S>
S kineticEnergyFromPlacements(const ModelTpl<S>& model, const DataTpl<S>& data,
                              const Eigen::Ref<const typename Types<S>::VecX>& qd);
template <typename S>
S potentialEnergyFromPlacements(const ModelTpl<S>& model, const DataTpl<S>& data);
}  // namespace detail

}  // namespace denoc

#include "denoc/algorithm/energy.hxx"

namespace denoc {
// instantiated for double in core/src/instantiate.cpp
extern template double kineticEnergy<double>(const Model&, Data&,
                                             const Eigen::Ref<const Types<double>::VecX>&,
                                             const Eigen::Ref<const Types<double>::VecX>&);
extern template double potentialEnergy<double>(const Model&, Data&,
                                               const Eigen::Ref<const Types<double>::VecX>&);
extern template double mechanicalEnergy<double>(const Model&, Data&,
                                                const Eigen::Ref<const Types<double>::VecX>&,
                                                const Eigen::Ref<const Types<double>::VecX>&, double&,
                                                double&);
}  // namespace denoc
