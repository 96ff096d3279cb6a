// The assembly of dtau/dq and dtau/dqd (inverse_dynamics_derivatives.hpp, detail::assembleDerivativesWide)
// from the records of the two derivative sweeps, column j (docs/planning.md):
//   rows i < j:   dtau_i/dq_j = p_i^T G_j,                     dtau_i/dqd_j = p_i^T H_j
//   rows i >= j:  dtau_i/dq_j = F1_i^T pddot_j + F2_i^T pdot_j, dtau_i/dqd_j = 2 F1_i^T pdot_j + F2_i^T p_j
// The row quantities p_i, F1_i, F2_i come as 18 arrays of n entries (row i of each contiguous across i), so
// each column is a loop over rows in SIMD lanes, W rows per register; the column quantities are the
// records' own. Like the blocked Cholesky (cholesky_blocked.cpp): one function per width with GCC's target
// attribute and flatten, chosen at run time, here 2 and 4 (AVX2) only: 8 lanes (AVX-512F) measured no faster
// on 2026-11-29 (bench_planners IDDerivatives, DENOC_SIMD_WIDTH=4 and 8, medians of 3, two rounds: 8.4 and
// 8.7-9.1 us at 48 joints, 23.2-24.0 and 23.0-23.1 us at 96, 3.43 and 3.68 us at 24); each product is summed
// in dot6's order in every lane and no multiply-add is fused (-ffp-contract=off), so the result has the bits
// of dot6 on every CPU and width.
#include <cstddef>

#include "denoc/algorithm/inverse_dynamics_derivatives.hpp"
#include "lane_memory.hpp"
#include "simd_dispatch.hpp"

namespace denoc::detail {
namespace {

using lanes::load;
using lanes::store;
using lanes::Vec;

/// sum_r a_r b_r in dot6's order, ((a0 b0 + a2 b2) + a4 b4) + ((a1 b1 + a3 b3) + a5 b5), on W rows at once:
/// a_r holds row r of W consecutive records (a + r n), b one record's 6 entries.
template <int W>
DENOC_INLINE Vec<W> dot6Rows(const double* a, std::ptrdiff_t n, const double* b) {
  const Vec<W> a0 = load<W>(a), a1 = load<W>(a + n), a2 = load<W>(a + 2 * n), a3 = load<W>(a + 3 * n),
               a4 = load<W>(a + 4 * n), a5 = load<W>(a + 5 * n);
  return ((a0 * b[0] + a2 * b[2]) + a4 * b[4]) + ((a1 * b[1] + a3 * b[3]) + a5 * b[5]);
}

DENOC_INLINE double dot6Row(const double* a, std::ptrdiff_t n, const double* b) {
  return ((a[0] * b[0] + a[2 * n] * b[2]) + a[4 * n] * b[4]) +
         ((a[n] * b[1] + a[3 * n] * b[3]) + a[5 * n] * b[5]);
}

template <int W>
DENOC_INLINE void assembleT(const double* rows, const DerivativeWork<double>* dw, double* dq, double* dv,
                            std::ptrdiff_t n) {
  const double* P = rows;            // rows r = 0..5: p_i
  const double* F1 = rows + 6 * n;   // F1_i
  const double* F2 = rows + 12 * n;  // F2_i
  for (std::ptrdiff_t j = 0; j < n; ++j) {
    const DerivativeWork<double>& c = dw[j];
    const double* G = c.G.data();
    const double* H = c.H.data();
    const double* p = c.p.data();
    const double* pdot = c.pdot.data();
    const double* pddot = c.pddot.data();
    double* dq_j = dq + j * n;
    double* dv_j = dv + j * n;
    std::ptrdiff_t i = 0;
    for (; i + W <= j; i += W) {
      store<W>(dq_j + i, dot6Rows<W>(P + i, n, G));
      store<W>(dv_j + i, dot6Rows<W>(P + i, n, H));
    }
    for (; i < j; ++i) {
      dq_j[i] = dot6Row(P + i, n, G);
      dv_j[i] = dot6Row(P + i, n, H);
    }
    for (; i + W <= n; i += W) {
      const Vec<W> f1_pdot = dot6Rows<W>(F1 + i, n, pdot);
      store<W>(dq_j + i, dot6Rows<W>(F1 + i, n, pddot) + dot6Rows<W>(F2 + i, n, pdot));
      store<W>(dv_j + i, (f1_pdot + f1_pdot) + dot6Rows<W>(F2 + i, n, p));
    }
    for (; i < n; ++i) {
      const double f1_pdot = dot6Row(F1 + i, n, pdot);
      dq_j[i] = dot6Row(F1 + i, n, pddot) + dot6Row(F2 + i, n, pdot);
      dv_j[i] = (f1_pdot + f1_pdot) + dot6Row(F2 + i, n, p);
    }
  }
}

__attribute__((flatten)) void assemble2(const double* rows, const DerivativeWork<double>* dw, double* dq,
                                        double* dv, std::ptrdiff_t n) {
  assembleT<2>(rows, dw, dq, dv, n);
}
#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2"), flatten)) void assemble4(const double* rows, const DerivativeWork<double>* dw,
                                                        double* dq, double* dv, std::ptrdiff_t n) {
  assembleT<4>(rows, dw, dq, dv, n);
}
#else
void assemble4(const double* rows, const DerivativeWork<double>* dw, double* dq, double* dv,
               std::ptrdiff_t n) {
  assembleT<2>(rows, dw, dq, dv, n);
}
#endif

}  // namespace

void assembleDerivativesWide(const double* rows, const DerivativeWork<double>* dw, double* dtau_dq,
                             double* dtau_dqd, int n, int lanes) {
  lanes = runnableLanes(lanes);
  if (lanes >= 4 && n >= 4) return assemble4(rows, dw, dtau_dq, dtau_dqd, n);
  assemble2(rows, dw, dtau_dq, dtau_dqd, n);
}

}  // namespace denoc::detail
