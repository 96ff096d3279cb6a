// The batch engine's SIMD kernels (batch_kernels.hpp): inverse dynamics, Saha's O(n) forward dynamics and
// the full factor for W states at once, by the core's scalar-templated algorithms instantiated with the
// W-lane scalar type simd::Lanes<W>.
//
// One translation unit, compiled for baseline x86-64 like the rest of the core, holds the kernels of every
// width. Each kernel is a function with GCC's `target` attribute (none for W = 2, "avx2" for W = 4,
// "avx512f" for W = 8) and `flatten`, which inlines into it everything it calls: the AVX2 and AVX-512 code
// exists only inside those functions, and the engine calls them only on a CPU that runs them
// (simd_dispatch.hpp). A template that is not inlined stays an ordinary out-of-line function compiled for
// the baseline, so the linker can never pick an AVX copy of an inline function for a baseline caller (the
// hazard of compiling shared headers with different -m flags in different translation units).
// tests/core/isa_isolation.sh checks the object code: wide registers only inside the kernels named here.
//
// The file is built with -ffp-contract=off (core/CMakeLists.txt): no multiply-add is fused, so every lane
// performs the operations of the single-state function in the same order and the results are equal bit
// for bit (the baseline build fuses nothing either). -DDENOC_SIMD_FMA=ON trades that for AVX2 FMA.
#include "batch_kernels.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "denoc/algorithm/check.hpp"
#include "denoc/algorithm/forward_dynamics.hpp"
#include "denoc/algorithm/inverse_dynamics.hpp"
#include "denoc/algorithm/tree_local.hpp"
#include "denoc/algorithm/udu.hpp"
#include "denoc/simd/lanes.hpp"
#include "lane_memory.hpp"

namespace denoc::detail {
namespace {

template <int W>
using L = simd::Lanes<W>;
template <int W>
using LVecX = typename Types<L<W>>::VecX;
template <int W>
using LMatX = typename Types<L<W>>::MatX;

template <int W>
struct LaneWs final : LaneWorkspace {
  ModelTpl<L<W>> model;
  DataTpl<L<W>> data;
  LVecX<W> a, b, c;                               // lane-interleaved inputs: q (nq), then two of nv
  typename Types<L<W>>::Vec6 wrench;              // tip wrench
  LVecX<W> row;                                   // a row of U (scatterExplicitU)
  std::vector<ExternalWrenchTpl<L<W>>> wrenches;  // a batch's list of external wrenches, gathered

  explicit LaneWs(const Model& m)
      : model(m.cast<L<W>>()),
        data(model),
        a(m.nq),
        b(m.nv),
        c(m.nv),
        row(m.n),
        wrenches(static_cast<std::size_t>(kMaxBatchWrenches)) {
    width = W;
  }
};

template <int W>
using Vec = typename L<W>::V;
/// In-register transposition of W vectors of W lanes: afterwards a[l] holds lane l of the W vectors, in
/// order (log2 W stages of shuffles with constant indices, one instruction each; __builtin_shufflevector is
/// GCC's (from 12) and Clang's). This is how states go into
/// lanes and back, W entries at a time, instead of one lane at a time.
template <int W>
DENOC_INLINE void transpose(Vec<W> (&a)[W]);

template <>
DENOC_INLINE void transpose<2>(Vec<2> (&a)[2]) {
  const Vec<2> t0 = __builtin_shufflevector(a[0], a[1], 0, 2);
  const Vec<2> t1 = __builtin_shufflevector(a[0], a[1], 1, 3);
  a[0] = t0;
  a[1] = t1;
}

template <>
DENOC_INLINE void transpose<4>(Vec<4> (&a)[4]) {
  const Vec<4> t0 = __builtin_shufflevector(a[0], a[1], 0, 4, 2, 6);
  const Vec<4> t1 = __builtin_shufflevector(a[0], a[1], 1, 5, 3, 7);
  const Vec<4> t2 = __builtin_shufflevector(a[2], a[3], 0, 4, 2, 6);
  const Vec<4> t3 = __builtin_shufflevector(a[2], a[3], 1, 5, 3, 7);
  a[0] = __builtin_shufflevector(t0, t2, 0, 1, 4, 5);
  a[1] = __builtin_shufflevector(t1, t3, 0, 1, 4, 5);
  a[2] = __builtin_shufflevector(t0, t2, 2, 3, 6, 7);
  a[3] = __builtin_shufflevector(t1, t3, 2, 3, 6, 7);
}

template <>
DENOC_INLINE void transpose<8>(Vec<8> (&a)[8]) {
  // blocks of 1, then 2, then 4 lanes swapped between rows 1, 2, 4 apart
  Vec<8> t[8];
  for (int r = 0; r < 8; r += 2) {
    t[r] = __builtin_shufflevector(a[r], a[r + 1], 0, 8, 2, 10, 4, 12, 6, 14);
    t[r + 1] = __builtin_shufflevector(a[r], a[r + 1], 1, 9, 3, 11, 5, 13, 7, 15);
  }
  for (int r : {0, 1, 4, 5}) {
    a[r] = __builtin_shufflevector(t[r], t[r + 2], 0, 1, 8, 9, 4, 5, 12, 13);
    a[r + 2] = __builtin_shufflevector(t[r], t[r + 2], 2, 3, 10, 11, 6, 7, 14, 15);
  }
  for (int r = 0; r < 4; ++r) {
    t[r] = __builtin_shufflevector(a[r], a[r + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    t[r + 4] = __builtin_shufflevector(a[r], a[r + 4], 4, 5, 6, 7, 12, 13, 14, 15);
  }
  for (int r = 0; r < 8; ++r) a[r] = t[r];
}

/// W 64-bit integers: the bits of a Vec<W>.
template <int W>
using Bits = typename simd::detail::VectorOf<W>::itype;

/// What gatherRows returns: the sign bit of lane l set when an entry of lane l is beyond the bound (or NaN).
template <int W>
DENOC_INLINE Bits<W> beyond(const Vec<W>& e, const Bits<W>& bound_bits) {
  // |e| <= bound exactly when magnitudeBits(e) is at most bound's bits (NaN: above every finite bound);
  // bound_bits - magnitudeBits(e) is then non-negative
  return bound_bits - simd::detail::magnitudeBits<W>(e);
}

/// Whether no lane has its sign bit set.
template <int W>
DENOC_INLINE bool noneBeyond(const Bits<W>& b) {
  std::uint64_t any = 0;
  for (int l = 0; l < W; ++l) any |= b[l];
  return (any >> 63) == 0;
}

/// Lane l of the result: row[l][i] (one load per lane, put together in registers: a vector written lane by
/// lane through memory and read back whole would wait for the stores, no store forwarding).
template <int W, std::size_t... l>
DENOC_INLINE Vec<W> column(const double* const* row, std::size_t i, std::index_sequence<l...>) {
  return Vec<W>{row[l][i]...};
}

/// Lane-interleaves the n entries of the W rows row[l] into v: v[i] lane l = row[l][i]. Blocks of W columns
/// are transposed in registers; the columns left over (n not a multiple of W) are the block of the last W
/// columns again (overlapping the one before: the same values written twice), or, for n < W, put together
/// column by column. Returns, in the sign bit of each lane, whether an entry of the lane is not within
/// `bound` (|x| <= bound, false for NaN: the single-state functions' check, check.hpp).
template <int W, typename Out>
DENOC_INLINE Bits<W> gatherRows(const double* const* row, std::size_t n, Out& v, double bound) {
  const Bits<W> bound_bits = Bits<W>{} + std::bit_cast<std::uint64_t>(bound);
  Bits<W> bad{};
  const auto put = [&](std::size_t i, const Vec<W>& e) {
    v[static_cast<Eigen::Index>(i)] = L<W>(e);
    bad |= beyond<W>(e, bound_bits);
  };
  if (n < static_cast<std::size_t>(W)) {
    for (std::size_t i = 0; i < n; ++i) put(i, column<W>(row, i, std::make_index_sequence<W>{}));
    return bad;
  }
  for (std::size_t i = 0;; i += W) {
    if (i + W > n) i = n - W;  // the last, overlapping block
    Vec<W> a[W];
    for (int l = 0; l < W; ++l) a[l] = lanes::load<W>(row[l] + i);
    transpose<W>(a);
    for (int t = 0; t < W; ++t) put(i + static_cast<std::size_t>(t), a[t]);
    if (i + W == n) return bad;
  }
}

/// The rows of the group of states [k, k + W) of a row-major array of rows of n entries (state
/// min(k + l, last) in lane l).
template <int W>
DENOC_INLINE void groupRows(const double* x, std::size_t n, std::size_t k, std::size_t last,
                            const double* (&row)[W]) {
  for (int l = 0; l < W; ++l) row[l] = x + std::min(k + static_cast<std::size_t>(l), last) * n;
}

/// gatherRows of the group of states [k, k + W) of a row-major count x n array.
template <int W, typename Out>
DENOC_INLINE Bits<W> gather(const double* x, std::size_t n, std::size_t k, std::size_t last, Out& v,
                            double bound) {
  const double* row[W];
  groupRows<W>(x, n, k, last, row);
  return gatherRows<W>(row, n, v, bound);
}

/// The sum of x - x over n lane values: 0 in every lane where all are finite, NaN in the others.
template <int W>
DENOC_INLINE L<W> finiteSum(const L<W>* v, std::size_t n) {
  L<W> acc(0.0);
  for (std::size_t i = 0; i < n; ++i) acc += v[i] - v[i];
  return acc;
}

template <int W>
DENOC_INLINE bool allZero(const L<W>& acc) {
  bool zero = true;
  for (int l = 0; l < W; ++l) zero &= acc[l] == 0.0;
  return zero;
}

/// Whether every lane of the n pivots v is positive and finite (checkPivots of the single-state functions).
template <int W>
DENOC_INLINE bool allPositive(const L<W>* v, std::size_t n) {
  bool positive = true;
  for (std::size_t i = 0; i < n; ++i) {
    for (int l = 0; l < W; ++l) positive &= v[i][l] > 0.0 && v[i][l] <= std::numeric_limits<double>::max();
  }
  return positive;
}

/// Whether every lane's configuration q (nq lane values, within kMaxPosition already) passes the rest of
/// checkConfigurationVector: a floating root's quaternion q[3..7) of norm within kQuaternionTolerance of 1,
/// each lane by the single-state check's own functions.
template <int W>
DENOC_INLINE bool rootQuaternionsValid(const Model& m, const LVecX<W>& q) {
  if (m.root != RootJoint::Floating) return true;
  bool valid = true;
  for (int l = 0; l < W; ++l) {
    valid &= quaternionNormAccepted(quaternionNorm(q[3][l], q[4][l], q[5][l], q[6][l]));
  }
  return valid;
}

/// The group [k, k + W)'s external wrenches of a batch's list into `out`: each wrench's values gathered into
/// lanes (state min(k + l, last) in lane l), its frame, reference and point the same in every lane. Returns,
/// in the sign bit of each lane, whether a value or a point is not within kMaxStateValue (the single-state
/// check, checkWrenches).
template <int W>
DENOC_INLINE Bits<W> gatherWrenchList(std::vector<ExternalWrenchTpl<L<W>>>& out, const BatchWrench* list,
                                      int count, std::size_t k, std::size_t last) {
  const Bits<W> bound_bits = Bits<W>{} + std::bit_cast<std::uint64_t>(kMaxStateValue);
  Bits<W> bad{};
  for (int j = 0; j < count; ++j) {
    const BatchWrench& w = list[j];
    ExternalWrenchTpl<L<W>>& e = out[static_cast<std::size_t>(j)];
    e.frame = w.frame;
    e.reference = w.reference;
    for (int i = 0; i < 3; ++i) {
      e.point[i] = L<W>(w.point[i]);
      bad |= beyond<W>(e.point[i].v, bound_bits);
    }
    const double* row[W];
    for (int l = 0; l < W; ++l)
      row[l] = w.values + std::min(k + static_cast<std::size_t>(l), last) * w.stride;
    bad |= gatherRows<W>(row, 6, e.wrench, kMaxStateValue);
  }
  return bad;
}

/// Writes lanes 0..valid-1 of the lane values v[i * stride], i < count, to out[l * out_stride + i]: one
/// transposed row of W entries per lane at a time; the entries left over (count not a multiple of W) as the
/// last W entries again (overlapping the block before: the same values written twice), or lane by lane for
/// count < W. Returns the sum of x - x over the values (finiteSum; each block summed as a tree, so that the
/// sum is no chain of dependent additions one value long).
template <int W>
DENOC_INLINE Vec<W> scatterRow(const L<W>* v, std::size_t stride, std::size_t count, double* out,
                               std::size_t out_stride, std::size_t valid) {
  Vec<W> acc{};
  if (count < static_cast<std::size_t>(W)) {
    for (std::size_t i = 0; i < count; ++i) {
      const Vec<W> e = v[i * stride].v;
      acc += e - e;
      for (std::size_t l = 0; l < valid; ++l) out[l * out_stride + i] = e[l];
    }
    return acc;
  }
  for (std::size_t i = 0;; i += W) {
    if (i + W > count) i = count - W;  // the last, overlapping block
    Vec<W> a[W], z[W];
    for (int t = 0; t < W; ++t) {
      a[t] = v[(i + static_cast<std::size_t>(t)) * stride].v;
      z[t] = a[t] - a[t];
    }
    for (int h = W / 2; h >= 1; h /= 2) {
      for (int t = 0; t < h; ++t) z[t] += z[t + h];
    }
    acc += z[0];
    transpose<W>(a);
    for (std::size_t l = 0; l < valid; ++l) lanes::store<W>(out + l * out_stride + i, a[l]);
    if (i + W == count) return acc;
  }
}

/// Writes lanes 0..valid-1 of the n values v to rows k.. of a row-major count x n array.
template <int W>
DENOC_INLINE void scatter(const L<W>* v, std::size_t n, double* out, std::size_t k, std::size_t valid) {
  scatterRow<W>(v, 1, n, out + k * n, n, valid);
}

/// Writes lanes 0..valid-1 of the n x n column-major m to rows k.. of a row-major count x n x n array (row
/// i of a state is entries i, i + n, ... of the column-major storage); returns finiteSum over m.
template <int W>
DENOC_INLINE Vec<W> scatterMatrix(const LMatX<W>& m, std::size_t n, double* out, std::size_t k,
                                  std::size_t valid) {
  Vec<W> acc{};
  for (std::size_t i = 0; i < n; ++i)
    acc += scatterRow<W>(m.data() + i, n, n, out + k * n * n + i * n, n * n, valid);
  return acc;
}

/// The same for a symmetric m: row i is column i, read contiguously.
template <int W>
DENOC_INLINE Vec<W> scatterSymmetric(const LMatX<W>& m, std::size_t n, double* out, std::size_t k,
                                     std::size_t valid) {
  Vec<W> acc{};
  for (std::size_t i = 0; i < n; ++i) {
    acc += scatterRow<W>(m.data() + i * n, 1, n, out + k * n * n + i * n, n * n, valid);
  }
  return acc;
}

/// Writes U of the O(n) factors (n > kDenseUDUMaxDof) to rows k.. of a row-major count x n x n array without
/// forming it in lanes: row i is 0 left of the diagonal, 1 on it and U_ij = p_i^T psi_j right of it (in
/// dot6's order, as explicitU computes it), put together in `row` (n lane values) and written like a row of a
/// matrix. Returns finiteSum over U.
template <int W>
DENOC_INLINE Vec<W> scatterExplicitU(const DataTpl<L<W>>& data, std::size_t n, L<W>* row, double* out,
                                     std::size_t k, std::size_t valid) {
  Vec<W> acc{};
  for (std::size_t i = 0; i < n; ++i) {
    const auto& p = data.p0[static_cast<Eigen::Index>(i)];
    for (std::size_t j = 0; j < i; ++j) row[j] = L<W>(0.0);
    row[i] = L<W>(1.0);
    for (std::size_t j = i + 1; j < n; ++j)
      row[j] = dot6Entries<L<W>>(p, data.work[static_cast<Eigen::Index>(j)].psi);
    acc += scatterRow<W>(row, 1, n, out + k * n * n + i * n, n * n, valid);
  }
  return acc;
}

template <int W>
DENOC_INLINE std::size_t inverseDynamicsLanes(const Model& m, Data&, LaneWorkspace& base, const IdArrays& x,
                                              std::size_t begin, std::size_t end) {
  auto& ws = static_cast<LaneWs<W>&>(base);
  const std::size_t nq = static_cast<std::size_t>(m.nq), nv = static_cast<std::size_t>(m.nv);
  for (std::size_t k = begin; k < end; k += W) {
    const std::size_t last = std::min(k + W, end) - 1;
    Bits<W> bad = gather<W>(x.q, nq, k, last, ws.a, kMaxPosition) |
                  gather<W>(x.qd, nv, k, last, ws.b, kMaxStateValue) |
                  gather<W>(x.qdd, nv, k, last, ws.c, kMaxStateValue);
    if (x.tip_wrench) bad |= gather<W>(x.tip_wrench, 6, k, last, ws.wrench, kMaxStateValue);
    if (x.wrench_count > 0) bad |= gatherWrenchList<W>(ws.wrenches, x.wrenches, x.wrench_count, k, last);
    if (!noneBeyond<W>(bad) || !rootQuaternionsValid<W>(m, ws.a)) return k;
    // inverseDynamics (inverse_dynamics.hxx, or a tree's treeInverseDynamics with the tip wrench as a
    // Local wrench on frame n; with a list of wrenches treeInverseDynamics for every model) without its
    // checks, done above
    if (x.wrench_count >= 0) {
      treeLocalRnea<L<W>>(ws.model, ws.data, ws.a, ws.b, ws.c.data(), true, ws.data.tau, ws.wrenches.data(),
                          x.wrench_count);
    } else if (m.serial) {
      rnea<L<W>>(ws.model, ws.data, ws.a, ws.b, ws.c.data(), x.tip_wrench ? &ws.wrench : nullptr, true,
                 ws.data.tau);
    } else {
      const ExternalWrenchTpl<L<W>> tip{m.n, ws.wrench, ReferenceFrame::Local};
      treeLocalRnea<L<W>>(ws.model, ws.data, ws.a, ws.b, ws.c.data(), true, ws.data.tau, &tip,
                          x.tip_wrench ? 1 : 0);
    }
    if (!allZero(finiteSum(ws.data.tau.data(), nv))) return k;
    scatter<W>(ws.data.tau.data(), nv, x.tau, k, last + 1 - k);
  }
  return end;
}

template <int W>
DENOC_INLINE std::size_t forwardDynamicsLanes(const Model& m, Data&, LaneWorkspace& base, const FdArrays& x,
                                              std::size_t begin, std::size_t end) {
  auto& ws = static_cast<LaneWs<W>&>(base);
  const std::size_t nq = static_cast<std::size_t>(m.nq), nv = static_cast<std::size_t>(m.nv);
  for (std::size_t k = begin; k < end; k += W) {
    const std::size_t last = std::min(k + W, end) - 1;
    Bits<W> bad = gather<W>(x.q, nq, k, last, ws.a, kMaxPosition) |
                  gather<W>(x.qd, nv, k, last, ws.b, kMaxStateValue) |
                  gather<W>(x.tau, nv, k, last, ws.c, kMaxStateValue);
    if (x.wrench_count > 0) bad |= gatherWrenchList<W>(ws.wrenches, x.wrenches, x.wrench_count, k, last);
    if (!noneBeyond<W>(bad) || !rootQuaternionsValid<W>(m, ws.a)) return k;
    // forwardDynamics (forward_dynamics.hxx, or a tree's treeForwardDynamics; with a list of wrenches
    // treeForwardDynamics for every model) without its checks; every pivot (a moving root's Cholesky pivots
    // among them) is checked below
    if (m.serial && x.wrench_count < 0) {
      forwardDynamicsSaha<L<W>>(ws.model, ws.data, ws.a, ws.b, ws.c);
    } else {
      treeLocalForwardInline<L<W>>(ws.model, ws.data, ws.a, ws.b, ws.c, ws.wrenches.data(),
                                   std::max(x.wrench_count, 0));
    }
    if (!allPositive(ws.data.D.data(), nv) || !allZero(finiteSum(ws.data.qdd.data(), nv))) return k;
    scatter<W>(ws.data.qdd.data(), nv, x.qdd, k, last + 1 - k);
  }
  return end;
}

/// A tree's computeFullFactor (treeFullFactor: I(q) by composite bodies, its factor on the tree's sparsity
/// with log det) and, when asked, computeInverseInertia (treeInverseInertia: the sweeps, or the product of
/// the sparse factor's inverses) for the group of states whose q is in ws.a, written to rows k..k + valid
/// - 1. False when a pivot or an output is not finite (pivots: not positive), the outputs then unspecified.
template <int W>
DENOC_INLINE bool treeFullFactorGroup(LaneWs<W>& ws, const FfArrays& x, std::size_t k, std::size_t valid) {
  DataTpl<L<W>>& data = ws.data;
  const std::size_t nv = static_cast<std::size_t>(ws.model.nv);
  treeLocalCrba<L<W>>(ws.model, data, ws.a);
  treeFactor<L<W>>(ws.model, data);
  if (!allPositive(data.D.data(), nv) || !allZero(finiteSum(data.D.data(), nv))) return false;
  // I is symmetric bit for bit (TL.6 writes one value to both triangles); U is read row by row
  const Vec<W> written =
      scatterSymmetric<W>(data.M, nv, x.inertia, k, valid) + scatterMatrix<W>(data.U, nv, x.u, k, valid);
  if (!allZero(L<W>(written))) return false;
  scatter<W>(data.D.data(), nv, x.d, k, valid);
  for (std::size_t l = 0; l < valid; ++l) {
    const double log_det = data.log_det[static_cast<int>(l)];
    if (!(log_det - log_det == 0.0)) return false;
    x.log_det[k + l] = log_det;
  }
  if (x.inverse) {
    // treeInverseInertia's route: the sweeps in depth-first order (the elimination's pivots are the factor's
    // D up to rounding, accepted above), else the factor's
    if (ws.model.inverse_by_sweeps) {
      treeArticulated<L<W>>(ws.model, data, ws.a);
      inverseBySweeps<L<W>>(ws.model, data);
    } else {
      treeInverseFromFactor<L<W>>(ws.model, data);
    }
    if (!allZero(L<W>(scatterSymmetric<W>(data.Minv, nv, x.inverse, k, valid)))) return false;
  }
  return true;
}

template <int W>
DENOC_INLINE std::size_t fullFactorLanes(const Model& m, Data& scalar, LaneWorkspace& base, const FfArrays& x,
                                         std::size_t begin, std::size_t end) {
  auto& ws = static_cast<LaneWs<W>&>(base);
  const std::size_t n = static_cast<std::size_t>(m.n);
  for (std::size_t k = begin; k < end; k += W) {
    const std::size_t last = std::min(k + W, end) - 1;
    const std::size_t valid = last + 1 - k;
    if (!noneBeyond<W>(gather<W>(x.q, static_cast<std::size_t>(m.nq), k, last, ws.a, kMaxPosition)) ||
        !rootQuaternionsValid<W>(m, ws.a))
      return k;
    if (!m.serial) {
      if (!treeFullFactorGroup<W>(ws, x, k, valid)) return k;
      continue;
    }
    // computeFullFactor (udu.hxx) without its checks, done below; log det below. Above kDenseUDUMaxDof,
    // fullFactor without explicitU: U is written to the output directly from p_i and psi_j, never formed
    // in lanes (W n x n lane values the outputs would be copied from)
    const bool dense = denseFactors(m.n);
    if (dense) {
      fullFactor<L<W>>(ws.model, ws.data, ws.a);
    } else {
      commonPlacementsAndInertias(ws.model, ws.data, ws.a);
      crba(ws.model, ws.data);
      articulated(ws.model, ws.data, false);
    }
    if (!allPositive(ws.data.D.data(), n) || !allZero(finiteSum(ws.data.D.data(), n))) return k;
    // the outputs, checked as they are written (a group that fails is computed again state by state, which
    // writes every output again)
    const Vec<W> written = scatterSymmetric<W>(ws.data.M, n, x.inertia, k, valid) +
                           (dense ? scatterMatrix<W>(ws.data.U, n, x.u, k, valid)
                                  : scatterExplicitU<W>(ws.data, n, ws.row.data(), x.u, k, valid));
    if (!allZero(L<W>(written))) return k;
    scatter<W>(ws.data.D.data(), n, x.d, k, valid);
    // log det I = sum log D lane by lane, with the scalar function (one logarithm of the product)
    for (std::size_t l = 0; l < valid; ++l) {
      for (std::size_t i = 0; i < n; ++i) scalar.D[static_cast<Eigen::Index>(i)] = x.d[(k + l) * n + i];
      const double log_det = logDetFromD<double>(scalar.D);
      if (!(log_det - log_det == 0.0)) return k;
      x.log_det[k + l] = log_det;
    }
    // computeInverseInertia: its route from what fullFactor leaves (which it may overwrite: D is out)
    if (x.inverse) {
      inverseAfterFactor<L<W>>(ws.model, ws.data);
      if (!allZero(L<W>(scatterSymmetric<W>(ws.data.Minv, n, x.inverse, k, valid)))) return k;
    }
  }
  return end;
}

// The kernels of each width: flatten inlines the whole computation into these functions, compiled for the
// named instruction set (see the file comment). Their names end in the width; tests/core/isa_isolation.sh
// expects wide registers in the Lanes4 and Lanes8 kernels only.
#define DENOC_LANE_KERNELS(W, ATTRIBUTES)                                                                  \
  ATTRIBUTES std::size_t inverseDynamicsLanes##W(const Model& m, Data& d, LaneWorkspace& ws,               \
                                                 const IdArrays& x, std::size_t b, std::size_t e) {        \
    return inverseDynamicsLanes<W>(m, d, ws, x, b, e);                                                     \
  }                                                                                                        \
  ATTRIBUTES std::size_t forwardDynamicsLanes##W(const Model& m, Data& d, LaneWorkspace& ws,               \
                                                 const FdArrays& x, std::size_t b, std::size_t e) {        \
    return forwardDynamicsLanes<W>(m, d, ws, x, b, e);                                                     \
  }                                                                                                        \
  ATTRIBUTES std::size_t fullFactorLanes##W(const Model& m, Data& d, LaneWorkspace& ws, const FfArrays& x, \
                                            std::size_t b, std::size_t e) {                                \
    return fullFactorLanes<W>(m, d, ws, x, b, e);                                                          \
  }

#if defined(DENOC_SIMD_FMA)
#define DENOC_AVX2_TARGET "avx2,fma"
#else
#define DENOC_AVX2_TARGET "avx2"
#endif

DENOC_LANE_KERNELS(2, __attribute__((flatten)))
#if defined(__x86_64__) || defined(__i386__)
DENOC_LANE_KERNELS(4, __attribute__((target(DENOC_AVX2_TARGET), flatten)))
DENOC_LANE_KERNELS(8, __attribute__((target("avx512f"), flatten)))
#else
// other targets: the generic vectors of 4 and 8 lanes, never chosen by simd_dispatch.cpp
DENOC_LANE_KERNELS(4, __attribute__((flatten)))
DENOC_LANE_KERNELS(8, __attribute__((flatten)))
#endif

#undef DENOC_LANE_KERNELS

const LaneKernels kKernels2{2, inverseDynamicsLanes2, forwardDynamicsLanes2, fullFactorLanes2};
const LaneKernels kKernels4{4, inverseDynamicsLanes4, forwardDynamicsLanes4, fullFactorLanes4};
const LaneKernels kKernels8{8, inverseDynamicsLanes8, forwardDynamicsLanes8, fullFactorLanes8};

}  // namespace

std::unique_ptr<LaneWorkspace> makeLaneWorkspace(const Model& model, int width) {
  switch (width) {
    case 2:
      return std::make_unique<LaneWs<2>>(model);
    case 4:
      return std::make_unique<LaneWs<4>>(model);
    case 8:
      return std::make_unique<LaneWs<8>>(model);
    default:
      return nullptr;
  }
}

const LaneKernels& laneKernels(int width) {
  return width == 8 ? kKernels8 : width == 4 ? kKernels4 : kKernels2;
}

}  // namespace denoc::detail
