// Batches of random states for the batch tests, the single-state reference computed state by state with a
// fresh Data each (the oracle of every batch test), and the one comparator of batch outputs.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "denoc/algorithm/convective.hpp"
#include "denoc/algorithm/fixman.hpp"
#include "denoc/batch.hpp"
#include "denoc/denoc.hpp"

namespace denoc::testing {

/// `count` states of an n-joint model, row-major: q, qd, u (qdd or tau), and tip wrenches (count x 6).
struct States {
  int n = 0;
  std::size_t count = 0;
  std::vector<double> q, qd, u, wrench;
};

inline States randomStates(int n, std::size_t count, std::uint32_t seed, double q_scale = 2.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  States s;
  s.n = n;
  s.count = count;
  const std::size_t total = count * static_cast<std::size_t>(n);
  s.q.resize(total);
  s.qd.resize(total);
  s.u.resize(total);
  s.wrench.resize(6 * count);
  for (double& x : s.q) x = q_scale * d(rng);
  for (double& x : s.qd) x = 2.0 * d(rng);
  for (double& x : s.u) x = 6.0 * d(rng);
  for (double& x : s.wrench) x = 2.0 * d(rng);
  return s;
}

/// The widths this CPU runs (Scalar, W2 and, with AVX2 and AVX-512, W4 and W8).
inline std::vector<SimdWidth> supportedWidths() {
  std::vector<SimdWidth> w;
  for (SimdWidth x : {SimdWidth::Scalar, SimdWidth::W2, SimdWidth::W4, SimdWidth::W8}) {
    if (simdWidthSupported(x)) w.push_back(x);
  }
  return w;
}

inline std::string widthName(SimdWidth w) {
  switch (w) {
    case SimdWidth::Auto:
      return "W auto";
    case SimdWidth::Scalar:
      return "W1";
    case SimdWidth::W2:
      return "W2";
    case SimdWidth::W4:
      return "W4";
    case SimdWidth::W8:
      return "W8";
  }
  return "W?";
}

/// Tolerance of the comparison with the single-state functions: none (bit for bit) unless the build lets
/// the SIMD kernels fuse multiply-adds (DENOC_SIMD_FMA) or the compiler may fuse them in the single-state
/// functions (a -march build with FMA), then 1e-12 of each state's largest entry.
#if defined(DENOC_SIMD_FMA) || defined(__FMA__)
inline constexpr double kLaneTolerance = 1e-12;
#else
inline constexpr double kLaneTolerance = 0.0;
#endif

/// Compares a batch output with the reference, `per_state` entries per state. tolerance 0: the same bits
/// (NaN-safe, -0 differs from +0); else |got - want| <= tolerance * max(1, largest |want| of that state).
inline ::testing::AssertionResult sameStates(const std::vector<double>& got, const std::vector<double>& want,
                                             std::size_t per_state, double tolerance) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << "sizes " << got.size() << " vs " << want.size();
  for (std::size_t b = 0; b < want.size(); b += per_state) {
    double scale = 1.0;
    for (std::size_t i = b; i < b + per_state; ++i) scale = std::max(scale, std::abs(want[i]));
    for (std::size_t i = b; i < b + per_state; ++i) {
      const bool ok = tolerance == 0.0 ? std::memcmp(&got[i], &want[i], sizeof(double)) == 0
                                       : std::abs(got[i] - want[i]) <= tolerance * scale;
      if (!ok) {
        return ::testing::AssertionFailure()
               << "state " << i / per_state << ", entry " << i % per_state << ": " << got[i] << " vs "
               << want[i] << " (difference " << got[i] - want[i] << ", state scale " << scale << ")";
      }
    }
  }
  return ::testing::AssertionSuccess();
}

using CMap = Eigen::Map<const Eigen::VectorXd>;

inline void rowMajor(const Eigen::MatrixXd& m, double* out) {
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (Eigen::Index j = 0; j < m.cols(); ++j) out[i * m.cols() + j] = m(i, j);
}

// ---- the single-state reference, one fresh Data per state

inline std::vector<double> referenceId(const Model& m, const States& s, bool wrench) {
  std::vector<double> tau(s.q.size());
  for (std::size_t k = 0; k < s.count; ++k) {
    Data d(m);
    const std::size_t o = k * static_cast<std::size_t>(m.n);
    const CMap q(s.q.data() + o, m.n), qd(s.qd.data() + o, m.n), qdd(s.u.data() + o, m.n);
    Eigen::Map<Eigen::VectorXd>(tau.data() + o, m.n) =
        wrench ? inverseDynamics(m, d, q, qd, qdd,
                                 Eigen::Map<const Eigen::Matrix<double, 6, 1>>(s.wrench.data() + 6 * k))
               : inverseDynamics(m, d, q, qd, qdd);
  }
  return tau;
}

inline std::vector<double> referenceFd(const Model& m, const States& s, ForwardRoute route) {
  std::vector<double> qdd(s.q.size());
  for (std::size_t k = 0; k < s.count; ++k) {
    Data d(m);
    const std::size_t o = k * static_cast<std::size_t>(m.n);
    const CMap q(s.q.data() + o, m.n), qd(s.qd.data() + o, m.n), tau(s.u.data() + o, m.n);
    Eigen::Map<Eigen::VectorXd> out(qdd.data() + o, m.n);
    switch (route) {
      case ForwardRoute::Saha:
        out = forwardDynamics(m, d, q, qd, tau);
        break;
      case ForwardRoute::Cholesky:
        out = forwardDynamicsCholesky(m, d, q, qd, tau);
        break;
      case ForwardRoute::Fixman:
        out = forwardDynamicsFixman(m, d, q, qd, tau);
        break;
    }
  }
  return qdd;
}

/// The outputs of fullFactorBatch, all of them.
struct Factor {
  std::vector<double> I, U, D, log_det, Minv, C, bias, g;
  explicit Factor(const States& s) {
    const std::size_t nn = s.q.size() * static_cast<std::size_t>(s.n);
    I.resize(nn);
    U.resize(nn);
    Minv.resize(nn);
    C.resize(nn);
    D.resize(s.q.size());
    bias.resize(s.q.size());
    g.resize(s.q.size());
    log_det.resize(s.count);
  }
  /// Pointers for fullFactorBatch: I, U, D, log det, and with `inverse` I^-1, with `optional` C, bias, g.
  FullFactorBatchOutput out(bool inverse, bool optional) {
    FullFactorBatchOutput o;
    o.inertia = I.data();
    o.u = U.data();
    o.d = D.data();
    o.log_det = log_det.data();
    if (inverse) o.inverse = Minv.data();
    if (optional) {
      o.convective = C.data();
      o.bias = bias.data();
      o.gravity_torque = g.data();
    }
    return o;
  }
};

inline Factor referenceFactor(const Model& m, const States& s) {
  Factor f(s);
  const std::size_t n = static_cast<std::size_t>(m.n);
  for (std::size_t k = 0; k < s.count; ++k) {
    Data d(m);
    const std::size_t o = k * n, oo = o * n;
    const CMap q(s.q.data() + o, m.n), qd(s.qd.data() + o, m.n);
    computeFullFactor(m, d, q);
    rowMajor(d.M, f.I.data() + oo);
    rowMajor(d.U, f.U.data() + oo);
    Eigen::Map<Eigen::VectorXd>(f.D.data() + o, m.n) = d.D;
    f.log_det[k] = d.log_det;
    rowMajor(computeInverseInertia(m, d, q), f.Minv.data() + oo);
    rowMajor(computeConvectiveMatrix(m, d, q, qd), f.C.data() + oo);
    Eigen::Map<Eigen::VectorXd>(f.bias.data() + o, m.n) = computeBias(m, d, q, qd);
    Eigen::Map<Eigen::VectorXd>(f.g.data() + o, m.n) = computeGravity(m, d, q);
  }
  return f;
}

}  // namespace denoc::testing
