// Blocked Cholesky factorization A = L L^T for the I(q) + Cholesky forward dynamics of large models
// (forward_dynamics.hpp, detail::choleskyBlocked), right-looking with panels of kPanel columns:
//   for each panel: factor its columns by the unblocked algorithm (as choleskyInPlace), then
//   A22 -= P P^T on the trailing matrix, P the panel below its diagonal block,
// the trailing update (nearly all of the n^3 / 6 multiplications) in register blocks of 8 rows (4 with
// SSE2) x 4 columns, W doubles per SIMD register.
//
// Why not Eigen's LLT, which is blocked the same way: this core builds Eigen without its explicit SIMD
// (EIGEN_DONT_VECTORIZE, core/CMakeLists.txt), so its GEMM kernels run one double at a time, and for
// n above about 300 they allocate their packing buffers on the heap (beyond Eigen's 128 KB stack limit;
// measured: 9 allocations per factorization at n = 500), which the core's hot paths must not do. This
// kernel allocates nothing and uses the widest registers the CPU has: like the batch kernels
// (batch_kernels.cpp), one function per width with GCC's target attribute and flatten, chosen at run time.
// Every entry is accumulated in the same order at every width (the registers hold independent rows) and
// no multiply-add is fused (-ffp-contract=off), so the factor is the same bit for bit on every CPU.
#include <cmath>
#include <cstddef>

#include "denoc/algorithm/forward_dynamics.hpp"
#include "lane_memory.hpp"
#include "simd_dispatch.hpp"

namespace denoc::detail {
namespace {

constexpr int kPanel = 32;

using lanes::load;
using lanes::store;
using lanes::Vec;

/// a[i, c0 + c] -= sum_t a[i, k0 + t] a[c0 + c, k0 + t] for c < CB, t < kb and rows i in [c0, n) (rows
/// above the diagonal within the block land in the unused upper triangle), in register blocks of RV
/// vectors of W rows x CB columns. Column-major, leading dimension n.
template <int W, int RV, int CB>
DENOC_INLINE void trailingUpdate(double* a, std::ptrdiff_t n, std::ptrdiff_t k0, int kb, std::ptrdiff_t c0) {
  constexpr std::ptrdiff_t kRows = RV * W;
  std::ptrdiff_t i = c0;
  for (; i + kRows <= n; i += kRows) {
    Vec<W> acc[RV][CB] = {};
    for (int t = 0; t < kb; ++t) {
      const double* pt = a + (k0 + t) * n;
      Vec<W> x[RV];
      for (int r = 0; r < RV; ++r) x[r] = load<W>(pt + i + r * W);
      for (int c = 0; c < CB; ++c) {
        const double b = pt[c0 + c];
        for (int r = 0; r < RV; ++r) acc[r][c] += x[r] * b;
      }
    }
    for (int c = 0; c < CB; ++c) {
      double* col = a + (c0 + c) * n + i;
      for (int r = 0; r < RV; ++r) store<W>(col + r * W, load<W>(col + r * W) - acc[r][c]);
    }
  }
  // the last rows one at a time, in the same order of operations
  for (; i < n; ++i) {
    for (int c = 0; c < CB; ++c) {
      double s = 0.0;
      for (int t = 0; t < kb; ++t) {
        const double* pt = a + (k0 + t) * n;
        s += pt[i] * pt[c0 + c];
      }
      a[(c0 + c) * n + i] -= s;
    }
  }
}

template <int W>
DENOC_INLINE bool choleskyBlockedT(double* a, std::ptrdiff_t n) {
  for (std::ptrdiff_t k0 = 0; k0 < n; k0 += kPanel) {
    const int kb = static_cast<int>(n - k0 < kPanel ? n - k0 : kPanel);
    // the panel's columns, unblocked (choleskyInPlace restricted to them)
    for (std::ptrdiff_t j = k0; j < k0 + kb; ++j) {
      double* aj = a + j * n;
      const double d = aj[j];
      if (!(d > 0.0)) return false;
      const double l = std::sqrt(d);
      aj[j] = l;
      const double inv_l = 1.0 / l;
      for (std::ptrdiff_t i = j + 1; i < n; ++i) aj[i] *= inv_l;
      for (std::ptrdiff_t c = j + 1; c < k0 + kb; ++c) {
        double* ac = a + c * n;
        const double l_cj = aj[c];
        for (std::ptrdiff_t i = c; i < n; ++i) ac[i] -= l_cj * aj[i];
      }
    }
    // the trailing matrix, four columns at a time, in blocks of 4 (W = 2) or 8 rows
    constexpr int kVectors = W == 2 ? 2 : 8 / W;
    std::ptrdiff_t c0 = k0 + kb;
    for (; c0 + 4 <= n; c0 += 4) trailingUpdate<W, kVectors, 4>(a, n, k0, kb, c0);
    for (; c0 < n; ++c0) trailingUpdate<W, kVectors, 1>(a, n, k0, kb, c0);
  }
  return true;
}

__attribute__((flatten)) bool choleskyBlocked2(double* a, std::ptrdiff_t n) {
  return choleskyBlockedT<2>(a, n);
}
#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2"), flatten)) bool choleskyBlocked4(double* a, std::ptrdiff_t n) {
  return choleskyBlockedT<4>(a, n);
}
__attribute__((target("avx512f"), flatten)) bool choleskyBlocked8(double* a, std::ptrdiff_t n) {
  return choleskyBlockedT<8>(a, n);
}
#else
bool choleskyBlocked4(double* a, std::ptrdiff_t n) { return choleskyBlockedT<2>(a, n); }
bool choleskyBlocked8(double* a, std::ptrdiff_t n) { return choleskyBlockedT<2>(a, n); }
#endif

}  // namespace

bool choleskyBlocked(double* a, int n, int lanes) {
  lanes = runnableLanes(lanes);
  if (lanes >= 8) return choleskyBlocked8(a, n);
  if (lanes >= 4) return choleskyBlocked4(a, n);
  return choleskyBlocked2(a, n);
}

}  // namespace denoc::detail
