// Explicit instantiations of the algorithms for double.
#include "denoc/denoc.hpp"

namespace denoc {

using VecX = Types<double>::VecX;
using Ref = Eigen::Ref<const VecX>;

template void computeLocalPlacements<double>(const Model&, Data&, const Ref&);
template void computeCommonPlacements<double>(const Model&, Data&);
template const VecX& inverseDynamics<double>(const Model&, Data&, const Ref&, const Ref&, const Ref&);
template const VecX& inverseDynamics<double>(const Model&, Data&, const Ref&, const Ref&, const Ref&,
                                             const Types<double>::Vec6&);
template const Types<double>::MatX& computeInertiaMatrix<double>(const Model&, Data&, const Ref&);
template void computeUDU<double>(const Model&, Data&, const Ref&, bool);
template void computeFullFactor<double>(const Model&, Data&, const Ref&);
template const Types<double>::MatX& computeInverseInertia<double>(const Model&, Data&, const Ref&);
template const VecX& forwardDynamics<double>(const Model&, Data&, const Ref&, const Ref&, const Ref&);
template const VecX& forwardDynamicsCholesky<double>(const Model&, Data&, const Ref&, const Ref&, const Ref&);
template double kineticEnergy<double>(const Model&, Data&, const Ref&, const Ref&);
template double potentialEnergy<double>(const Model&, Data&, const Ref&);
template double mechanicalEnergy<double>(const Model&, Data&, const Ref&, const Ref&, double&, double&);

}  // namespace denoc
