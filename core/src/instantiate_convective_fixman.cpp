// Explicit instantiations of the convective-inertia and Fixman algorithms for double.
#include "denoc/algorithm/convective.hpp"
#include "denoc/algorithm/fixman.hpp"
#include "denoc/algorithm/tree_local.hpp"

namespace denoc {

using VecX = Types<double>::VecX;
using MatX = Types<double>::MatX;
using Ref = Eigen::Ref<const VecX>;
using OutRef = Eigen::Ref<VecX>;

template const MatX& computeConvectiveMatrix<double>(const Model&, Data&, const Ref&, const Ref&);
template const VecX& computeVelocityBias<double>(const Model&, Data&, const Ref&, const Ref&);
template const VecX& computeBias<double>(const Model&, Data&, const Ref&, const Ref&);
template const VecX& computeGravity<double>(const Model&, Data&, const Ref&);
template void fixmanSolve<double>(const Model&, Data&, const Ref&, const Ref&, OutRef);
template double fixmanLogDet<double>(const Model&, Data&, const Ref&);
template const VecX& forwardDynamicsFixman<double>(const Model&, Data&, const Ref&, const Ref&, const Ref&);

}  // namespace denoc
