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
// tests/isa_isolation.sh checks the object code: wide registers only inside the kernels named here.
//
// The file is built with -ffp-contract=off (core/CMakeLists.txt): no multiply-add is fused, so every lane
// performs the operations of the single-state function in the same order and the results are equal bit
// for bit (the baseline build fuses nothing either). -DDENOC_SIMD_FMA=ON trades that for AVX2 FMA.
#include "batch_kernels.hpp"

#include <algorithm>
#include <cstddef>

#include "denoc/algorithm/forward_dynamics.hpp"
#include "denoc/algorithm/inverse_dynamics.hpp"
#include "denoc/algorithm/udu.hpp"
#include "denoc/simd/lanes.hpp"

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
  LVecX<W> a, b, c;                   // lane-interleaved inputs
  typename Types<L<W>>::Vec6 wrench;  // tip wrench

  explicit LaneWs(const Model& m) : model(m.cast<L<W>>()), data(model), a(m.n), b(m.n), c(m.n) { width = W; }
};

/// The W rows of a row-major array read by the group of states [k, k + W): state min(k + l, last) in lane l.
template <int W>
struct Rows {
  const double* row[W];
  Rows(const double* x, std::size_t stride, std::size_t k, std::size_t last) {
    for (int l = 0; l < W; ++l) row[l] = x + std::min(k + static_cast<std::size_t>(l), last) * stride;
  }
  DENOC_INLINE L<W> operator[](std::size_t i) const {
    typename L<W>::V v;
    for (int l = 0; l < W; ++l) v[l] = row[l][i];
    return L<W>(v);
  }
};

/// Lane-interleaves n entries of the group into v; returns the sum of x - x over them (0 in every lane when
/// all are finite, NaN in a lane with an infinite or NaN entry).
template <int W, typename Out>
DENOC_INLINE L<W> gather(const double* x, std::size_t n, std::size_t k, std::size_t last, Out& v) {
  const Rows<W> rows(x, n, k, last);
  L<W> acc(0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const L<W> e = rows[i];
    v[static_cast<Eigen::Index>(i)] = e;
    acc += e - e;
  }
  return acc;
}

/// The same check on n lane values.
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

/// Writes lanes 0..valid-1 of the n values v to rows k.. of a row-major count x n array.
template <int W>
DENOC_INLINE void scatter(const L<W>* v, std::size_t n, double* out, std::size_t k, std::size_t valid) {
  for (std::size_t l = 0; l < valid; ++l) {
    double* row = out + (k + l) * n;
    for (std::size_t i = 0; i < n; ++i) row[i] = v[i][static_cast<int>(l)];
  }
}

/// Writes lanes 0..valid-1 of the n x n column-major m to rows k.. of a row-major count x n x n array: a
/// transposition, in tiles of 8 x 8 entries so that reads and writes both stay within a few cache lines.
template <int W>
DENOC_INLINE void scatterMatrix(const LMatX<W>& m, std::size_t n, double* out, std::size_t k,
                                std::size_t valid) {
  constexpr std::size_t kTile = 8;
  const L<W>* v = m.data();
  for (std::size_t i0 = 0; i0 < n; i0 += kTile) {
    const std::size_t i1 = std::min(i0 + kTile, n);
    for (std::size_t j0 = 0; j0 < n; j0 += kTile) {
      const std::size_t j1 = std::min(j0 + kTile, n);
      for (std::size_t l = 0; l < valid; ++l) {
        double* o = out + (k + l) * n * n;
        for (std::size_t i = i0; i < i1; ++i) {
          for (std::size_t j = j0; j < j1; ++j) o[i * n + j] = v[i + j * n][static_cast<int>(l)];
        }
      }
    }
  }
}

template <int W>
DENOC_INLINE std::size_t inverseDynamicsLanes(const Model& m, Data&, LaneWorkspace& base, const IdArrays& x,
                                              std::size_t begin, std::size_t end) {
  auto& ws = static_cast<LaneWs<W>&>(base);
  const std::size_t n = static_cast<std::size_t>(m.n);
  for (std::size_t k = begin; k < end; k += W) {
    const std::size_t last = std::min(k + W, end) - 1;
    L<W> acc = gather<W>(x.q, n, k, last, ws.a) + gather<W>(x.qd, n, k, last, ws.b) +
               gather<W>(x.qdd, n, k, last, ws.c);
    if (x.tip_wrench) acc += gather<W>(x.tip_wrench, 6, k, last, ws.wrench);
    if (!allZero(acc)) return k;
    // inverseDynamics (inverse_dynamics.hxx) without its checks, done above
    rnea<L<W>>(ws.model, ws.data, ws.a, ws.b, ws.c.data(), x.tip_wrench ? &ws.wrench : nullptr, true,
               ws.data.tau);
    if (!allZero(finiteSum(ws.data.tau.data(), n))) return k;
    scatter<W>(ws.data.tau.data(), n, x.tau, k, last + 1 - k);
  }
  return end;
}

template <int W>
DENOC_INLINE std::size_t forwardDynamicsLanes(const Model& m, Data&, LaneWorkspace& base, const FdArrays& x,
                                              std::size_t begin, std::size_t end) {
  auto& ws = static_cast<LaneWs<W>&>(base);
  const std::size_t n = static_cast<std::size_t>(m.n);
  for (std::size_t k = begin; k < end; k += W) {
    const std::size_t last = std::min(k + W, end) - 1;
    const L<W> acc = gather<W>(x.q, n, k, last, ws.a) + gather<W>(x.qd, n, k, last, ws.b) +
                     gather<W>(x.tau, n, k, last, ws.c);
    if (!allZero(acc)) return k;
    // forwardDynamics (forward_dynamics.hxx) without its checks
    forwardDynamicsSaha<L<W>>(ws.model, ws.data, ws.a, ws.b, ws.c);
    if (!allZero(finiteSum(ws.data.qdd.data(), n))) return k;
    scatter<W>(ws.data.qdd.data(), n, x.qdd, k, last + 1 - k);
  }
  return end;
}

template <int W>
DENOC_INLINE std::size_t fullFactorLanes(const Model& m, Data& scalar, LaneWorkspace& base, const FfArrays& x,
                                         std::size_t begin, std::size_t end) {
  auto& ws = static_cast<LaneWs<W>&>(base);
  const std::size_t n = static_cast<std::size_t>(m.n);
  for (std::size_t k = begin; k < end; k += W) {
    const std::size_t last = std::min(k + W, end) - 1;
    const std::size_t valid = last + 1 - k;
    if (!allZero(gather<W>(x.q, n, k, last, ws.a))) return k;
    // computeFullFactor (udu.hxx) without its check; log det below
    fullFactor<L<W>>(ws.model, ws.data, ws.a);
    const L<W> acc = finiteSum(ws.data.M.data(), n * n) + finiteSum(ws.data.U.data(), n * n) +
                     finiteSum(ws.data.D.data(), n);
    if (!allZero(acc)) return k;
    scatterMatrix<W>(ws.data.M, n, x.inertia, k, valid);
    scatterMatrix<W>(ws.data.U, n, x.u, k, valid);
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
      if (!allZero(finiteSum(ws.data.Minv.data(), n * n))) return k;
      scatterMatrix<W>(ws.data.Minv, n, x.inverse, k, valid);
    }
  }
  return end;
}

// The kernels of each width: flatten inlines the whole computation into these functions, compiled for the
// named instruction set (see the file comment). Their names end in the width; tests/isa_isolation.sh
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
