// out = -A B for the forward-dynamics derivatives (forward_dynamics_derivatives.hpp,
// detail::negatedProductWide): A = I(q)^-1 (n x n, both triangles stored), B = dtau/dq or dtau/dqd, all
// column-major with leading dimension n. Each entry is o_ij = sum_k a_ik (-b_kj), k ascending from 0, held in
// a register over the whole sum; register blocks of RV vectors of W rows x 4 columns of out (two loads of A
// per 8 multiply-adds at the widest block), W doubles per SIMD register. Like the blocked Cholesky
// (cholesky_blocked.cpp): one function per width with GCC's target attribute and flatten, chosen at run
// time; every entry is summed in the same order at every width and no multiply-add is fused
// (-ffp-contract=off), so the product is the same bit for bit on every CPU and at every width.
#include <cstddef>

#include "denoc/algorithm/forward_dynamics_derivatives.hpp"
#include "lane_memory.hpp"
#include "simd_dispatch.hpp"

namespace denoc::detail {
namespace {

using lanes::load;
using lanes::store;
using lanes::Vec;

/// Rows [i, i + RV W) of columns [j, j + CB) of out.
template <int W, int RV, int CB>
DENOC_INLINE void block(const double* a, const double* b, double* o, std::ptrdiff_t n, std::ptrdiff_t i,
                        std::ptrdiff_t j) {
  Vec<W> acc[RV][CB] = {};
  for (std::ptrdiff_t k = 0; k < n; ++k) {
    const double* ak = a + k * n + i;
    Vec<W> x[RV];
    for (int r = 0; r < RV; ++r) x[r] = load<W>(ak + r * W);
    for (int c = 0; c < CB; ++c) {
      const double y = -b[k + (j + c) * n];
      for (int r = 0; r < RV; ++r) acc[r][c] += x[r] * y;
    }
  }
  for (int c = 0; c < CB; ++c)
    for (int r = 0; r < RV; ++r) store<W>(o + (j + c) * n + i + r * W, acc[r][c]);
}

/// Rows [i, n) of columns [j, j + CB) one at a time, in the same order of operations.
template <int CB>
DENOC_INLINE void lastRows(const double* a, const double* b, double* o, std::ptrdiff_t n, std::ptrdiff_t i,
                           std::ptrdiff_t j) {
  for (; i < n; ++i) {
    double s[CB] = {};
    for (std::ptrdiff_t k = 0; k < n; ++k) {
      const double aik = a[i + k * n];
      for (int c = 0; c < CB; ++c) s[c] += aik * -b[k + (j + c) * n];
    }
    for (int c = 0; c < CB; ++c) o[i + (j + c) * n] = s[c];
  }
}

/// Columns [j, j + CB): blocks of two vectors of rows, then one vector, then single rows.
template <int W, int CB>
DENOC_INLINE void columns(const double* a, const double* b, double* o, std::ptrdiff_t n, std::ptrdiff_t j) {
  std::ptrdiff_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) block<W, 2, CB>(a, b, o, n, i, j);
  for (; i + W <= n; i += W) block<W, 1, CB>(a, b, o, n, i, j);
  lastRows<CB>(a, b, o, n, i, j);
}

template <int W>
DENOC_INLINE void negatedProductT(const double* a, const double* b, double* o, std::ptrdiff_t n) {
  std::ptrdiff_t j = 0;
  for (; j + 4 <= n; j += 4) columns<W, 4>(a, b, o, n, j);
  for (; j + 2 <= n; j += 2) columns<W, 2>(a, b, o, n, j);
  for (; j < n; ++j) columns<W, 1>(a, b, o, n, j);
}

__attribute__((flatten)) void negatedProduct2(const double* a, const double* b, double* o, std::ptrdiff_t n) {
  negatedProductT<2>(a, b, o, n);
}
#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2"), flatten)) void negatedProduct4(const double* a, const double* b, double* o,
                                                              std::ptrdiff_t n) {
  negatedProductT<4>(a, b, o, n);
}
__attribute__((target("avx512f"), flatten)) void negatedProduct8(const double* a, const double* b, double* o,
                                                                 std::ptrdiff_t n) {
  negatedProductT<8>(a, b, o, n);
}
#else
void negatedProduct4(const double* a, const double* b, double* o, std::ptrdiff_t n) {
  negatedProductT<2>(a, b, o, n);
}
void negatedProduct8(const double* a, const double* b, double* o, std::ptrdiff_t n) {
  negatedProductT<2>(a, b, o, n);
}
#endif

}  // namespace

int productDerivativesMaxDofDouble() {
  return defaultLanes() >= 4 ? kProductDerivativesMaxDofWide : kProductDerivativesMaxDofPairs;
}

void negatedProductWide(const double* a, const double* b, double* out, int n, int lanes) {
  lanes = runnableLanes(lanes);
  while (lanes > 2 && 2 * lanes > n) lanes /= 2;  // rows in blocks of two registers, not left to single rows
  if (lanes >= 8) return negatedProduct8(a, b, out, n);
  if (lanes >= 4) return negatedProduct4(a, b, out, n);
  negatedProduct2(a, b, out, n);
}

}  // namespace denoc::detail
