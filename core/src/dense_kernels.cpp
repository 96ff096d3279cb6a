// The dense steps of I(q), the full factor and I^-1 for double (commonPlacementsAndInertias, crba,
// denseUDU, the O(n) route's explicit U, the sweeps of I^-1 (a chain's and a tree's) and of -I^-1 B; a
// tree's treeLocalCrba and treeFactor; algorithm/dense_kernels.hpp) compiled a second time for AVX2 and
// chosen at run time (detail::denseKernelsWide). The code is the baseline's, each function inlined whole into
// its twin (flatten); what changes is the encoding: VEX instructions take three operands, so the register
// copies that SSE2's destructive two-operand form needs (a quarter of the placements' instructions) go, and
// the loop of the joint angles' sines and cosines runs four joints per register. No multiply-add is fused
// (-ffp-contract=off, and no "fma" target): every entry is the same sum in the same order, the same bits.
#include "denoc/algorithm/dense_kernels.hpp"

#include "denoc/algorithm/inertia_matrix.hpp"
#include "denoc/algorithm/tree_local.hpp"
#include "denoc/algorithm/udu.hpp"
#include "simd_dispatch.hpp"

namespace denoc::detail {

bool denseKernelsWide() {
  static const bool wide = runnableLanes(0) >= 4;
  return wide;
}

#if defined(__x86_64__) || defined(__i386__)
#define DENOC_DENSE_TARGET __attribute__((target("avx2"), flatten))
#else
#define DENOC_DENSE_TARGET __attribute__((flatten))
#endif

namespace {
DENOC_DENSE_TARGET void placementsAvx2(const Model& model, Data& data,
                                       const Eigen::Ref<const Types<double>::VecX>& q, bool angles_ready,
                                       KeptPlacement<double>* keep) {
  commonPlacementsAndInertias<double, false>(model, data, q, angles_ready, keep);
}
DENOC_DENSE_TARGET void crbaAvx2(const Model& model, Data& data) { crba<double, false>(model, data); }
DENOC_DENSE_TARGET bool denseUDUAvx2(const Model& model, Data& data) {
  return denseUDU<double, false>(model, data);
}
DENOC_DENSE_TARGET void explicitUAvx2(const Model& model, Data& data) {
  explicitU<double, false>(model, data);
}
DENOC_DENSE_TARGET void inverseBySweepsAvx2(const Model& model, Data& data) {
  inverseBySweeps<double, false>(model, data);
}
DENOC_DENSE_TARGET void negatedSolveUDUAvx2(const Model& model, Data& data, const Types<double>::MatX& B,
                                            Types<double>::MatX& X) {
  negatedSolveUDU<double, false>(model, data, B, X);
}
DENOC_DENSE_TARGET void treeLocalCrbaAvx2(const Model& model, Data& data,
                                          const Eigen::Ref<const Types<double>::VecX>& q, bool after_sweep) {
  treeLocalCrba<double, false>(model, data, q, after_sweep);
}
DENOC_DENSE_TARGET int treeFactorAvx2(const Model& model, Data& data) {
  return treeFactor<double, false>(model, data);
}
}  // namespace

void commonPlacementsAndInertiasWide(const Model& model, Data& data,
                                     const Eigen::Ref<const Types<double>::VecX>& q, bool angles_ready,
                                     KeptPlacement<double>* keep) {
  placementsAvx2(model, data, q, angles_ready, keep);
}
void crbaWide(const Model& model, Data& data) { crbaAvx2(model, data); }
bool denseUDUWide(const Model& model, Data& data) { return denseUDUAvx2(model, data); }
void explicitUWide(const Model& model, Data& data) { explicitUAvx2(model, data); }
void inverseBySweepsWide(const Model& model, Data& data) { inverseBySweepsAvx2(model, data); }
void negatedSolveUDUWide(const Model& model, Data& data, const Types<double>::MatX& B,
                         Types<double>::MatX& X) {
  negatedSolveUDUAvx2(model, data, B, X);
}
void treeLocalCrbaWide(const Model& model, Data& data, const Eigen::Ref<const Types<double>::VecX>& q,
                       bool after_sweep) {
  treeLocalCrbaAvx2(model, data, q, after_sweep);
}
int treeFactorWide(const Model& model, Data& data) { return treeFactorAvx2(model, data); }

}  // namespace denoc::detail
