#pragma once

#include <cassert>
#include <cmath>
#include <type_traits>

#include "denoc/algorithm/check.hpp"
#include "denoc/algorithm/fixed_size.hpp"
#include "denoc/algorithm/inertia_matrix.hpp"
#include "denoc/algorithm/kinematics.hpp"

namespace denoc {
namespace detail {

template <typename S>
S logDetFromD(const typename Types<S>::VecX& D) {
  using std::log;
  if constexpr (std::is_floating_point_v<S>) {
    // one logarithm of the product when it stays a normal number (the usual case for arms) ...
    S product = S(1);
    for (Eigen::Index k = 0; k < D.size(); ++k) product *= D[k];
    if (std::isnormal(product)) return log(product);
    // ... else accumulate it as mantissa and binary exponent: no overflow, still one logarithm
    S mantissa = S(1);
    long exponent = 0;
    for (Eigen::Index k = 0; k < D.size(); ++k) {
      int e = 0;
      mantissa = std::frexp(mantissa * D[k], &e);
      exponent += e;
    }
    return log(mantissa) + S(exponent) * S(0.69314718055994530941723212145818);
  } else {
    S sum = S(0);
    for (Eigen::Index k = 0; k < D.size(); ++k) sum += log(D[k]);
    return sum;
  }
}

/// One step of the reverse Gaussian elimination at joint k: on entry Mh holds Mh_{k+1} - psi_hat_{k+1}
/// psi_{k+1}^T (zero for k = n - 1); adds M_k to it (Mh_k, eq. B.4 of Saha 1999 with B = 1), then psi_hat_k =
/// Mh_k p_k, mh_k = p_k^T psi_hat_k (+ armature), psi_k = psi_hat_k / mh_k, and leaves Mh_k - psi_hat_k
/// psi_k^T. 70 multiplications and one division.
template <typename S>
DENOC_INLINE void eliminationStep(SymInertia6<S>& Mh, const RigidInertia<S>& Mk,
                                  const typename Types<S>::Vec6& p, const S& armature,
                                  typename Types<S>::Vec6& psi, S& mh, S& inv_mh) {
  // Mh_k = M_k + (Mh_{k+1} - psi_hat psi^T): [[I, h x], [(h x)^T, m 1]]
  Mh.addRigid(Mk);
  const typename Types<S>::Vec6 psi_hat = Mh * p;
  mh = p.dot(psi_hat) + armature;
  inv_mh = S(1) / mh;
  psi = psi_hat * inv_mh;
  Mh.subtractOuter(psi_hat, psi);
}

template <typename S>
DENOC_FLATTEN void articulated(const ModelTpl<S>& model, DataTpl<S>& data, bool with_log_det) {
  const int n = model.n;
  SymInertia6<S> Mh;
  Mh.setZero();
  for (int k = n - 1; k >= 0; --k) {
    JointWork<S>& wk = data.work[k];
    eliminationStep(Mh, wk.M, data.p0[k], model.joint[k].armature, wk.psi, data.D[k], wk.inv_mh);
  }
  if (with_log_det) data.log_det = logDetFromD<S>(data.D);
}

/// One step of the elimination on the upper triangle of the Schur complement W (column-major, leading
/// dimension ld): D_k = W_kk, U_ak = W_ak / D_k, W_ab -= U_ak W_bk for a < b < k, and on the diagonal
/// W_bb -= (W_bk W_bk) / D_k, whose square is formed while 1 / D_k is: the next pivot waits on one product
/// and one subtraction after the division instead of two products. Returns whether D_k is refused.
template <int N, typename S>
DENOC_INLINE bool eliminateFromBottom(S* W, S* U, S* D, int ld, int k) {
  const S d = W[k + k * ld];
  D[k] = d;
  const S inv_d = S(1) / d;
  S* Uk = U + k * ld;
  const S* Wk = W + k * ld;
  forJoints<N>(0, k, [&](int a) { Uk[a] = Wk[a] * inv_d; });
  forJoints<N>(0, k, [&](int b) {
    const S w_bk = Wk[b];
    S* Wb = W + b * ld;
    forJoints<N>(0, b, [&](int a) { Wb[a] -= Uk[a] * w_bk; });
    Wb[b] -= (w_bk * w_bk) * inv_d;
  });
  if constexpr (std::is_floating_point_v<S>) {
    return !pivotAccepted(d);
  } else {
    return false;
  }
}

/// denseUDU at a joint count N fixed when compiling (6, 7): the steps of the run-time loop below, on local
/// arrays that the unrolled loops keep in registers, so that the chain of dependencies from one pivot to the
/// next holds no store and reload of the work matrix; U and D are written once. Returns the number of
/// pivots refused.
template <typename S, int N>
DENOC_INLINE unsigned denseUDUFixed(const S* M, S* U_out, S* D) {
  S W[N * N];  // upper triangle: the Schur complements
  S U[N * N];  // strict upper triangle
  unsigned bad = 0;
  forJoints<N>(0, N, [&](int b) { forJoints<N>(0, b + 1, [&](int a) { W[a + b * N] = M[a + b * N]; }); });
  forJoints<N>(0, N, [&](int step) { bad += eliminateFromBottom<N>(W, U, D, N, N - 1 - step); });
  forJoints<N>(0, N, [&](int b) {
    forJoints<N>(0, b, [&](int a) { U_out[a + b * N] = U[a + b * N]; });
    U_out[b + b * N] = S(1);
    forJoints<N>(b + 1, N, [&](int a) { U_out[a + b * N] = S(0); });
  });
  return bad;
}

template <typename S, bool kDispatch>
DENOC_FLATTEN bool denseUDU(const ModelTpl<S>& model, DataTpl<S>& data) {
  if constexpr (std::is_same_v<S, double> && kDispatch) {
    if (denseKernelsWide()) return denseUDUWide(model, data);
  }
  // plain loops: at the sizes this route is used for, expression overhead dominates the arithmetic
  unsigned bad = 0;
  withJointCount<S>(model.n, [&](auto fixed) {
    constexpr int N = decltype(fixed)::value;
    if constexpr (N > 0) {
      bad = denseUDUFixed<S, N>(data.M.data(), data.U.data(), data.D.data());
    } else {
      const int n = model.n;
      S* W = data.udu_W.data();  // column-major work copy of I's upper triangle: the Schur complements
      S* U = data.U.data();
      S* D = data.D.data();
      const S* M = data.M.data();
      for (int b = 0; b < n; ++b) {
        for (int a = 0; a <= b; ++a) W[a + b * n] = M[a + b * n];
        for (int a = b + 1; a < n; ++a) U[a + b * n] = S(0);
        U[b + b * n] = S(1);
      }
      // eliminate row and column k from the bottom
      for (int k = n - 1; k >= 0; --k) bad += eliminateFromBottom<0>(W, U, D, n, k);
    }
  });
  return bad == 0;
}

template <typename S, bool kDispatch>
DENOC_FLATTEN void explicitU(const ModelTpl<S>& model, DataTpl<S>& data) {
  if constexpr (std::is_same_v<S, double> && kDispatch) {
    if (denseKernelsWide()) return explicitUWide(model, data);
  }
  const int n = model.n;
  assert(data.sweep_eta_mu.size() == 6 * n);
  // p_i as six rows of n entries, so that column k, U_ik = p_i^T psi_k for i < k, is one loop over i whose
  // iterations are independent (SIMD lanes), each sum in dot6's order
  S* rows = data.sweep_eta_mu.data();
  for (int i = 0; i < n; ++i)
    for (int r = 0; r < 6; ++r) rows[i + r * n] = data.p0[i][r];
  const S* r0 = rows;
  const S* r1 = r0 + n;
  const S* r2 = r1 + n;
  const S* r3 = r2 + n;
  const S* r4 = r3 + n;
  const S* r5 = r4 + n;
  for (int k = 0; k < n; ++k) {
    const typename Types<S>::Vec6& psi = data.work[k].psi;
    const S s[6] = {psi[0], psi[1], psi[2], psi[3], psi[4], psi[5]};
    S* col = data.U.data() + static_cast<Eigen::Index>(k) * n;
    DENOC_INDEPENDENT
    for (int i = 0; i < k; ++i) {
      const S a[6] = {r0[i], r1[i], r2[i], r3[i], r4[i], r5[i]};
      col[i] = dot6Entries<S>(a, s);
    }
    col[k] = S(1);
    for (int i = k + 1; i < n; ++i) col[i] = S(0);
  }
}

/// One joint's step of the sweeps of section 5.2 on the columns c0 <= c < c1 at once: with eta^c (or mu^c)
/// in six rows of ld entries (row r at e + r ld),
///   y_c <- a y_c - u^T e^c   (with kRead; else y_c <- -u^T e^c),   e^c <- e^c + w y_c,
/// u^T e by dot6Entries. Sweep (i): u = p_i, w = psi_i; sweep (iii): u = psi_i, w = p_i, a = 1 / mh_i.
/// Column c touches entry c only, so the loop runs in SIMD lanes (DENOC_INDEPENDENT); e^c is read into
/// registers before y_c is stored, which could otherwise be taken for a write to e.
template <typename S, bool kRead>
DENOC_INLINE void sweepStep(S* y, S* e, Eigen::Index ld, Eigen::Index c0, Eigen::Index c1,
                            const typename Types<S>::Vec6& u, const typename Types<S>::Vec6& w, const S& a) {
  S* e0 = e;
  S* e1 = e0 + ld;
  S* e2 = e1 + ld;
  S* e3 = e2 + ld;
  S* e4 = e3 + ld;
  S* e5 = e4 + ld;
  const S ur[6] = {u[0], u[1], u[2], u[3], u[4], u[5]};
  const S w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4], w5 = w[5];
  DENOC_INDEPENDENT
  for (Eigen::Index c = c0; c < c1; ++c) {
    const S a0 = e0[c], a1 = e1[c], a2 = e2[c], a3 = e3[c], a4 = e4[c], a5 = e5[c];
    const S ar[6] = {a0, a1, a2, a3, a4, a5};
    const S d = dot6Entries<S>(ur, ar);
    S yc;
    if constexpr (kRead) {
      yc = a * y[c] - d;
    } else {
      yc = -d;
    }
    e0[c] = a0 + w0 * yc;
    e1[c] = a1 + w1 * yc;
    e2[c] = a2 + w2 * yc;
    e3[c] = a3 + w3 * yc;
    e4[c] = a4 + w4 * yc;
    e5[c] = a5 + w5 * yc;
    y[c] = yc;
  }
}

/// Column b of B into column x of X = -(U D U^T)^-1 B by the sweeps of section 5.2:
///   (i)   i = n-1..0: tauh_i = -b_i - p_i^T eta_{i+1},  eta_i = eta_{i+1} + psi_i tauh_i  (eta_n = 0)
///   (iii) i = 0..n-1: x_i = tauh_i / mh_i - psi_i^T mu_{i-1},  mu_i = mu_{i-1} + p_i x_i  (mu_{-1} = 0)
/// (tauh_i kept in x between the sweeps), each product p^T eta, psi^T mu in dot6's order.
template <typename S>
DENOC_INLINE void negatedSolveColumn(int n, const JointWork<S>* work, const typename Types<S>::Vec6* p,
                                     const S* b, S* x) {
  using Vec6 = typename Types<S>::Vec6;
  Vec6 eta = Vec6::Zero();
  for (int i = n - 1; i >= 0; --i) {
    const S t = -b[i] - dot6(p[i], eta);
    eta += work[i].psi * t;
    x[i] = t;
  }
  Vec6 mu = Vec6::Zero();
  for (int i = 0; i < n; ++i) {
    const S xi = x[i] * work[i].inv_mh - dot6(work[i].psi, mu);
    mu += p[i] * xi;
    x[i] = xi;
  }
}

/// negatedSolveColumn on every column. For double, the sweeps run on all columns at once, one joint at a
/// time, as inverseBySweeps does: B^T in data.sweep_rows (row i of B contiguous), eta and mu of every column
/// as six rows of n entries (data.sweep_eta_mu), so each step is a loop over the columns that runs in SIMD
/// lanes with no dependence between its iterations. One column at a time, each step waits for the last
/// (p^T eta needs the eta just updated): a chain of about 30 cycles per joint that left the 2n columns of
/// the forward-dynamics derivatives bound by latency. The sums are dot6's, so every column has the bits of
/// negatedSolveColumn.
template <typename S, bool kDispatch>
DENOC_FLATTEN void negatedSolveUDU(const ModelTpl<S>& model, DataTpl<S>& data,
                                   const typename Types<S>::MatX& B, typename Types<S>::MatX& X) {
  if constexpr (std::is_same_v<S, double> && kDispatch) {
    if (denseKernelsWide()) return negatedSolveUDUWide(model, data, B, X);
  }
  const int n = model.n;
  assert(B.rows() == n && B.cols() == n && X.rows() == n && X.cols() == n && B.data() != X.data());
  const JointWork<S>* work = data.work.data();
  const typename Types<S>::Vec6* p = data.p0.data();
  if constexpr (!std::is_same_v<S, double>) {
    for (int c = 0; c < n; ++c) negatedSolveColumn<S>(n, work, p, B.data() + c * n, X.data() + c * n);
  } else {
    assert(data.sweep_rows.rows() == n && data.sweep_eta_mu.size() == 6 * n);
    const Eigen::Index m = n;
    double* rows = data.sweep_rows.data();  // column i: row i of B, then tauh_i, then x_i, of every column
    for (Eigen::Index c = 0; c < m; ++c)
      for (Eigen::Index i = 0; i < m; ++i) rows[c + i * m] = B.data()[i + c * m];
    double* e = data.sweep_eta_mu.data();  // e + r m: row r of eta^c, then of mu^c
    // (i) tip to base: tauh_i = -b_i - p_i^T eta_{i+1}
    for (Eigen::Index c = 0; c < 6 * m; ++c) e[c] = 0.0;
    for (int i = n - 1; i >= 0; --i)
      sweepStep<double, true>(rows + i * m, e, m, 0, m, p[i], work[i].psi, -1.0);
    // (ii) and (iii) base to tip: x_i = tauh_i / mh_i - psi_i^T mu_{i-1}
    for (Eigen::Index c = 0; c < 6 * m; ++c) e[c] = 0.0;
    for (int i = 0; i < n; ++i)
      sweepStep<double, true>(rows + i * m, e, m, 0, m, work[i].psi, p[i], work[i].inv_mh);
    for (Eigen::Index c = 0; c < m; ++c)
      for (Eigen::Index i = 0; i < m; ++i) X.data()[i + c * m] = rows[c + i * m];
  }
}

/// I^-1 = U^-T D^-1 U^-1 from the dense factors data.U, data.D into data.Minv (both triangles):
/// W = U^-1 by back substitution (n^3 / 6 multiplications), then Minv_ij = sum_k W_ki W_kj / D_k.
template <typename S>
DENOC_FLATTEN void inverseFromUDU(const ModelTpl<S>& model, DataTpl<S>& data) {
  withJointCount<S>(model.n, [&](auto fixed) {
    constexpr int N = decltype(fixed)::value;
    const int n = N > 0 ? N : model.n;
    const S* U = data.U.data();
    S* W = data.minv_Uinv.data();  // column-major, upper triangle
    S* Mi = data.Minv.data();
    S* inv_D = data.minv_inv_D.data();
    S* v = data.minv_v.data();
    forJoints<N>(0, n, [&](int j) {
      S* Wj = W + j * n;
      Wj[j] = S(1);
      forJoints<N>(0, j, [&](int step) {
        const int i = j - 1 - step;
        S vi = U[i + j * n];
        forJoints<N>(i + 1, j, [&](int k) { vi += U[i + k * n] * Wj[k]; });
        Wj[i] = -vi;
      });
    });
    const S* D = data.D.data();
    forJoints<N>(0, n, [&](int k) { inv_D[k] = S(1) / D[k]; });
    forJoints<N>(0, n, [&](int j) {
      const S* Wj = W + j * n;
      forJoints<N>(0, j + 1, [&](int k) { v[k] = Wj[k] * inv_D[k]; });  // W_kj / D_k
      forJoints<N>(0, j + 1, [&](int i) {
        const S* Wi = W + i * n;
        S sum = S(0);
        forJoints<N>(0, i + 1, [&](int k) { sum += Wi[k] * v[k]; });
        Mi[i + j * n] = Mi[j + i * n] = sum;
      });
    });
  });
}

/// I^-1 = U^-T D^-1 U^-1 with the O(n) factors into data.Minv (both triangles): the three sweeps of section
/// 5.2 on every unit vector e_j at once, one coordinate at a time, on the upper triangle only (I^-1 is
/// symmetric). A chain's factors come from articulated(), a tree's (numbered depth first, model.tree_sweeps)
/// from treeArticulated (TL.8 of docs/algorithms.md), the root's coordinates first. Coordinate k has its
/// parent lambda(k) = model.dof_parent[k] (k - 1 on a chain) and its subtree the range k..end_k - 1
/// (model.dof_end; all of k..n - 1 on a chain):
///   (i)   k = nv-1..0, j in k's subtree: tauh_k^j = delta_kj - p_k^T eta^j,  eta^j <- eta^j + psi_k tauh_k^j
///   (iii) k = 0..nv-1, j >= k:  x_k^j = tauh_k^j / mh_k - psi_k^T mu_lambda(k)^j,  mu_k^j = mu_lambda(k)^j +
///         p_k x_k^j
/// with tauh_k^j = 0 off k's subtree. In (i) column j is stepped on only by j's path (a coordinate steps on
/// its subtree's columns), so one accumulator eta^j serves every branch: it sums psi_a tauh_a^j over the a
/// on j's path below k. In (iii) the accumulator holds mu of the previous coordinate, which is k's parent
/// but where k begins a further branch: there the parent's mu, kept after its step (model.dof_slot), is
/// copied back on the columns j >= k. A fixed root's top-level subtrees do not couple: the columns past the
/// current one's end are zero and not stepped on. eta^j and mu^j for all j are six rows of nv entries
/// (data.sweep_eta_mu); each step is a product and rank-one update over contiguous columns: 12
/// multiplications per entry of the upper triangle and sweep, 12 n^2 in all on a chain, in loops over j that
/// run in SIMD lanes (DENOC_INDEPENDENT).
template <typename S, bool kDispatch>
DENOC_FLATTEN void inverseBySweeps(const ModelTpl<S>& model, DataTpl<S>& data) {
  if constexpr (std::is_same_v<S, double> && kDispatch) {
    if (denseKernelsWide()) return inverseBySweepsWide(model, data);
  }
  using Vec6 = typename Types<S>::Vec6;
  const int nv = model.nv, nr = model.nr;
  const Eigen::Index m = nv;
  assert(model.tree_sweeps && data.sweep_eta_mu.size() == 6 * m);
  const int* lambda = model.dof_parent.data();
  const int* end = model.dof_end.data();
  const int* slot = model.dof_slot.data();
  const JointWork<S>* work = data.work.data();
  const Vec6* p0 = data.p0.data();
  const Vec6* root_p = data.sweep_root_p.data();
  const Vec6* root_psi = data.sweep_root_psi.data();
  const S* root_inv_mh = data.sweep_root_inv_mh.data();
  const auto p = [&](int k) -> const Vec6& { return k < nr ? root_p[k] : p0[k - nr]; };
  const auto psi = [&](int k) -> const Vec6& { return k < nr ? root_psi[k] : work[k - nr].psi; };
  const auto inv_mh = [&](int k) -> const S& { return k < nr ? root_inv_mh[k] : work[k - nr].inv_mh; };
  S* Mi = data.Minv.data();         // column k, rows j >= k: tauh_k^j, then x_k^j = (I^-1)_kj
  S* e = data.sweep_eta_mu.data();  // e + r nv: row r of eta^j, then of mu^j
  S* saved = data.sweep_saved.data();
  // (i) leaves to root
  for (Eigen::Index c = 0; c < 6 * m; ++c) e[c] = S(0);
  for (int k = nv - 1; k >= 0; --k) {
    const Vec6& psi_k = psi(k);
    S* t = Mi + static_cast<Eigen::Index>(k) * m;
    t[k] = S(1);  // eta^k vanishes below k
    for (int r = 0; r < 6; ++r) e[k + r * m] += psi_k[r];
    sweepStep<S, false>(t, e, m, k + 1, end[k], p(k), psi_k, S(0));
    for (Eigen::Index j = end[k]; j < m; ++j) t[j] = S(0);
  }
  // (ii) and (iii) root to leaves; a fixed root's next top-level subtree finds its columns of mu still zero
  // (the earlier subtrees step on their own columns only)
  for (Eigen::Index c = 0; c < 6 * m; ++c) e[c] = S(0);
  Eigen::Index block_end = m;
  for (int k = 0; k < nv; ++k) {
    const int a = lambda[k];
    if (a < 0) {
      block_end = end[k];
    } else if (a != k - 1) {
      const S* kept = saved + static_cast<Eigen::Index>(slot[a]) * 6 * m;
      for (int r = 0; r < 6; ++r)
        for (Eigen::Index j = k; j < block_end; ++j) e[j + r * m] = kept[j + r * m];
    }
    sweepStep<S, true>(Mi + static_cast<Eigen::Index>(k) * m, e, m, k, block_end, psi(k), p(k), inv_mh(k));
    if (slot[k] >= 0) {
      S* kept = saved + static_cast<Eigen::Index>(slot[k]) * 6 * m;
      for (int r = 0; r < 6; ++r)
        for (Eigen::Index j = k + 1; j < block_end; ++j) kept[j + r * m] = e[j + r * m];
    }
  }
  // the upper triangle from the lower
  for (Eigen::Index j = 1; j < m; ++j) {
    S* col = Mi + j * m;
    for (Eigen::Index i = 0; i < j; ++i) col[i] = Mi[j + i * m];
  }
}

template <typename S>
bool fullFactor(const ModelTpl<S>& model, DataTpl<S>& data,
                const Eigen::Ref<const typename Types<S>::VecX>& q) {
  commonPlacementsAndInertias(model, data, q);
  crba(model, data);
  if (denseFactors(model.n)) return denseUDU(model, data);
  articulated(model, data, false);  // reuses the link inertias of the composite-body pass
  explicitU(model, data);
  return allPivotsAccepted<S>(data.D);
}

template <typename S>
void inverseAfterFactor(const ModelTpl<S>& model, DataTpl<S>& data) {
  if (model.n <= kDenseInverseMaxDof) {
    inverseFromUDU(model, data);
  } else {
    if (denseFactors(model.n)) articulated(model, data, false);  // the link inertias are still there
    inverseBySweeps(model, data);
  }
}

}  // namespace detail

template <typename S>
void computeUDU(const ModelTpl<S>& model, DataTpl<S>& data,
                const Eigen::Ref<const typename Types<S>::VecX>& q, bool explicit_u) {
  if (!model.serial) return detail::treeFullFactor<S>(model, data, q, "computeUDU");
  detail::checkData(model, data, "computeUDU");
  detail::checkVector(model, q, "computeUDU", "q", kMaxPosition);
  detail::commonPlacementsAndInertias(model, data, q);
  detail::articulated(model, data, true);
  detail::checkPivots<S>(data.D, "computeUDU");
  detail::checkScalar<S>(data.log_det, "computeUDU", "log det");
  if (explicit_u) {
    detail::explicitU(model, data);
    detail::checkOutput<S>(data.U, "computeUDU", "U");
  }
}

template <typename S>
void computeFullFactor(const ModelTpl<S>& model, DataTpl<S>& data,
                       const Eigen::Ref<const typename Types<S>::VecX>& q) {
  if (!model.serial) return detail::treeFullFactor<S>(model, data, q, "computeFullFactor");
  detail::checkData(model, data, "computeFullFactor");
  detail::checkVector(model, q, "computeFullFactor", "q", kMaxPosition);
  // the pivots are tested as they are formed (denseUDU), the error names the first refused
  if (!detail::fullFactor(model, data, q)) detail::pivotError<S>(data.D, "computeFullFactor");
  // I needs no pass (computeInertiaMatrix); nor does U from denseUDU once its pivots pass: a non-finite
  // U_ak = W_ak / D_k (W_ak is finite: 1 / D_k is infinite) makes W_aa -= (W_ak W_ak) / D_k, hence the later
  // pivot D_a, -inf or NaN (the subtracted term is never negative), so the pivot test refuses it
  // (docs/algorithms.md, "Argument checks and the numerical range"). The O(n) route's U = p_i^T psi_k has no
  // such link and is checked.
  assert(detail::allFinite(data.M.data(), data.M.size()));
  data.log_det = detail::logDetFromD<S>(data.D);
  if (!detail::denseFactors(model.n)) detail::checkOutput<S>(data.U, "computeFullFactor", "U");
  assert(detail::allFinite(data.U.data(), data.U.size()));
  detail::checkScalar<S>(data.log_det, "computeFullFactor", "log det");
}

template <typename S>
const typename Types<S>::MatX& computeInverseInertia(const ModelTpl<S>& model, DataTpl<S>& data,
                                                     const Eigen::Ref<const typename Types<S>::VecX>& q) {
  if (!model.serial) return detail::treeInverseInertia<S>(model, data, q, "computeInverseInertia");
  detail::checkData(model, data, "computeInverseInertia");
  detail::checkVector(model, q, "computeInverseInertia", "q", kMaxPosition);
  detail::commonPlacementsAndInertias(model, data, q);
  if (model.n <= kDenseInverseMaxDof) {
    detail::crba(model, data);
    if (!detail::denseUDU(model, data)) detail::pivotError<S>(data.D, "computeInverseInertia");
    detail::inverseFromUDU(model, data);
  } else {
    detail::articulated(model, data, false);
    detail::checkPivots<S>(data.D, "computeInverseInertia");
    detail::inverseBySweeps(model, data);
  }
  detail::checkOutput<S>(data.Minv, "computeInverseInertia", "I^-1");
  return data.Minv;
}

}  // namespace denoc
