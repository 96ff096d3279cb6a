// Explicit instantiations for double of what planners call: user-frame kinematics, Jacobians, (dJ/dt) qd, the
// operational-space inertia, and the derivatives of the inverse and forward dynamics.
#include "denoc/algorithm/forward_dynamics_derivatives.hpp"
#include "denoc/algorithm/inverse_dynamics_derivatives.hpp"
#include "denoc/algorithm/kinematics.hpp"
#include "denoc/algorithm/operational_space.hpp"
#include "denoc/algorithm/tree_local.hpp"

namespace denoc {

using Vec3 = Types<double>::Vec3;
using Vec6 = Types<double>::Vec6;
using Ref = Eigen::Ref<const Types<double>::VecX>;

template int frameIndex<double>(const Model&, const std::string&);
template void forwardKinematics<double>(const Model&, Data&, const Ref&);
template void framePlacement<double>(const Model&, Data&, const Ref&, int, Types<double>::Mat3&, Vec3&);
template const Eigen::Matrix<double, 6, Eigen::Dynamic>& computeFrameJacobian<double>(const Model&, Data&,
                                                                                      const Ref&, int,
                                                                                      const Vec3&,
                                                                                      ReferenceFrame);
template const Vec6& computeFrameJdotQd<double>(const Model&, Data&, const Ref&, const Ref&, int, const Vec3&,
                                                ReferenceFrame);
template const Types<double>::Mat6& computeOperationalSpaceInertia<double>(const Model&, Data&, const Ref&,
                                                                           int, const Vec3&, ReferenceFrame,
                                                                           TaskRows);
template void computeInverseDynamicsDerivatives<double>(const Model&, Data&, const Ref&, const Ref&,
                                                        const Ref&);
template void computeInverseDynamicsDerivatives<double>(const Model&, Data&, const Ref&, const Ref&,
                                                        const Ref&, const Vec6&);
template void computeForwardDynamicsDerivatives<double>(const Model&, Data&, const Ref&, const Ref&,
                                                        const Ref&);
template void computeForwardDynamicsDerivatives<double>(const Model&, Data&, const Ref&, const Ref&,
                                                        const Ref&, const Vec6&);
template void computeInverseDynamicsDerivatives<double>(const Model&, Data&, const Ref&, const Ref&,
                                                        const Ref&, const std::vector<ExternalWrench>&);
template void computeForwardDynamicsDerivatives<double>(const Model&, Data&, const Ref&, const Ref&,
                                                        const Ref&, const std::vector<ExternalWrench>&);

}  // namespace denoc
