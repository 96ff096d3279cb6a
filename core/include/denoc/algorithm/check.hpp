// The one numeric check of every public algorithm (docs/algorithms.md, "Numerical range"):
//  - at the boundary, each input vector has the right size and every entry is finite and within its range
//    (std::invalid_argument naming the function, the argument and the index): |q_i| <= kMaxPosition, every
//    other entry (rates, accelerations, efforts, right-hand sides) |x| <= kMaxStateValue;
//  - after the computation, the pivots of a factorization are positive and finite and every result is
//    finite (denoc::NumericalError naming the function and the pivot or the output): with inputs and model
//    in range this holds unless the inertia matrix is not numerically positive definite at the state.
// Each check is one pass over the numbers it checks, with one branch at its end, except the dense
// elimination's pivots, tested as the elimination forms them (denseUDU). (q's range check folded into the
// joint angles' loop the same way was measured 2-6 % slower on the arms' I(q) and full factor than its own
// vectorized pass, though 55-100 instructions fewer, and was not kept.)
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "denoc/model.hpp"

namespace denoc {

/// Largest |q_i| accepted (rad for a revolute joint, m for a prismatic one).
inline constexpr double kMaxPosition = 1e6;

/// Largest |x| accepted for every other state entry: joint rates, accelerations, torques and forces, the
/// right-hand side of a solve, the entries of a tip wrench.
inline constexpr double kMaxStateValue = 1e12;

namespace detail {

/// The shortest text that reads back to x.
inline std::string formatNumber(double x) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

/// True when every one of the n entries of x is finite with |x_i| <= bound (one pass, no early exit).
template <typename S>
bool withinRange(const S* x, Eigen::Index n, double bound) {
  if constexpr (std::is_floating_point_v<S>) {
    unsigned bad = 0;
    for (Eigen::Index i = 0; i < n; ++i) bad |= static_cast<unsigned>(!(std::abs(x[i]) <= S(bound)));
    return bad == 0;
  } else {
    return true;
  }
}

/// True when every one of the n entries of x is finite (one pass, no early exit). For double, on the bits:
/// an entry is infinite or NaN exactly when its exponent field is all ones, so (bits & E) + 2^52 carries
/// into the sign bit for those and for no finite one (E = 0x7FF0...0); the OR of these sums needs no
/// floating-point operation, so the loop is independent from entry to entry (integer SIMD lanes), where a
/// floating-point sum would wait for each add in turn.
template <typename S>
bool allFinite(const S* x, Eigen::Index n) {
  if constexpr (std::is_same_v<S, double>) {
    constexpr std::uint64_t kExponent = 0x7FF0000000000000ull, kOne = 0x0010000000000000ull;
    std::uint64_t carry = 0;
    for (Eigen::Index i = 0; i < n; ++i) {
      std::uint64_t bits;
      std::memcpy(&bits, x + i, sizeof bits);
      carry |= (bits & kExponent) + kOne;
    }
    return (carry >> 63) == 0;
  } else if constexpr (std::is_floating_point_v<S>) {
    S acc = S(0);  // x - x is 0 for a finite x and NaN for an infinite or NaN one
    for (Eigen::Index i = 0; i < n; ++i) acc += x[i] - x[i];
    return acc == S(0);
  } else {
    return true;
  }
}

/// Throws std::invalid_argument for the first entry of x (n entries) not finite or beyond bound.
template <typename S>
[[noreturn]] void rangeError(const S* x, Eigen::Index n, double bound, const char* function,
                             const char* name) {
  Eigen::Index i = 0;
  while (i + 1 < n && std::abs(x[i]) <= S(bound)) ++i;
  throw std::invalid_argument(std::string(function) + ": " + name + "[" + std::to_string(i) + "] is " +
                              formatNumber(static_cast<double>(x[i])) + ", expected a finite number in [-" +
                              formatNumber(bound) + ", " + formatNumber(bound) + "]");
}

/// The workspace belongs to the model: a Data made for a model of as many joints (Data data(model)). Every
/// field's shape follows from the joint count alone, so this is what keeps a Data made for another model
/// from being read or written out of bounds.
/// A function of the serial recursions (any_model false) refuses a tree model (model.hpp) naming itself.
template <typename S, typename D>
void checkData(const ModelTpl<S>& model, const D& data, const char* function, bool any_model = false) {
  if (!model.serial && !any_model) {
    throw std::invalid_argument(
        std::string(function) +
        ": not available for a tree model (branches, a floating or planar root, or a "
        "link with a singular inertia) in this version; docs/trees.md lists the routes "
        "that are");
  }
  if (data.n != model.n || data.nv != model.nv) {
    const auto size = [](int n, int nv) {
      return std::to_string(n) + " joints" + (nv == n ? "" : " (nv = " + std::to_string(nv) + ")");
    };
    throw std::invalid_argument(std::string(function) + ": the Data was made for a model of " +
                                size(data.n, data.nv) + ", this model has " + size(model.n, model.nv) +
                                " (make its workspace with Data(model))");
  }
}

/// An input vector of a public algorithm: n entries (one per joint), each finite with |x_i| <= bound
/// (kMaxPosition for q, kMaxStateValue for the others).
template <typename S, typename Vec>
void checkVector(const ModelTpl<S>& model, const Vec& v, const char* function, const char* name,
                 double bound = kMaxStateValue) {
  if (v.size() != model.nv) {
    throw std::invalid_argument(std::string(function) + ": " + name + " has " + std::to_string(v.size()) +
                                " entries, expected " + std::to_string(model.nv) +
                                (model.serial ? " (one per joint)" : " (nv: one per velocity coordinate)"));
  }
  if constexpr (std::is_floating_point_v<S>) {
    if (!withinRange(v.data(), v.size(), bound)) rangeError(v.data(), v.size(), bound, function, name);
  }
}

/// The norm of a floating root's quaternion (x, y, z, w) and whether it is accepted, within
/// kQuaternionTolerance of 1: the one arithmetic of every check of it (the SIMD kernels check each lane with
/// it, so they refuse exactly what the single-state functions refuse).
inline double quaternionNorm(double x, double y, double z, double w) {
  return std::sqrt(x * x + y * y + z * z + w * w);
}
inline bool quaternionNormAccepted(double norm) { return std::abs(norm - 1.0) <= kQuaternionTolerance; }

/// A configuration: nq entries within kMaxPosition and, for a floating root, a quaternion q[3..7) whose
/// norm is within kQuaternionTolerance of 1 (the message names the norm).
template <typename S, typename Vec>
void checkConfigurationVector(const ModelTpl<S>& model, const Vec& q, const char* function,
                              const char* name) {
  if (q.size() != model.nq) {
    throw std::invalid_argument(
        std::string(function) + ": " + name + " has " + std::to_string(q.size()) + " entries, expected " +
        std::to_string(model.nq) +
        (model.serial ? " (one per joint)" : " (nq: the root's coordinates, then one per joint)"));
  }
  if constexpr (std::is_floating_point_v<S>) {
    if (!withinRange(q.data(), q.size(), kMaxPosition))
      rangeError(q.data(), q.size(), kMaxPosition, function, name);
    if (model.root == RootJoint::Floating) {
      const double norm = quaternionNorm(q[3], q[4], q[5], q[6]);
      if (!quaternionNormAccepted(norm)) {
        throw std::invalid_argument(std::string(function) + ": " + name +
                                    "[3..7), the root's quaternion, has norm " +
                                    formatNumber(static_cast<double>(norm)) + ", expected 1 within " +
                                    formatNumber(kQuaternionTolerance));
      }
    }
  }
}

/// The three state vectors of a dynamics call at once (one loop, one branch): q (within kMaxPosition), then
/// two more (within kMaxStateValue); on an error the message is checkVector's for the first vector at
/// fault, in argument order.
template <typename S, typename Vec>
void checkVectors(const ModelTpl<S>& model, const char* function, const Vec& q, const char* q_name,
                  const Vec& b, const char* b_name, const Vec& c, const char* c_name) {
  const Eigen::Index n = model.n;
  if (!model.serial) {
    checkConfigurationVector(model, q, function, q_name);
    checkVector(model, b, function, b_name);
    checkVector(model, c, function, c_name);
    return;
  }
  if constexpr (std::is_floating_point_v<S>) {
    if (q.size() == n && b.size() == n && c.size() == n) {
      const S* x = q.data();
      const S* y = b.data();
      const S* z = c.data();
      unsigned bad = 0;
      for (Eigen::Index i = 0; i < n; ++i) {
        bad |= static_cast<unsigned>(!(std::abs(x[i]) <= S(kMaxPosition))) |
               static_cast<unsigned>(!(std::abs(y[i]) <= S(kMaxStateValue))) |
               static_cast<unsigned>(!(std::abs(z[i]) <= S(kMaxStateValue)));
      }
      if (bad == 0) return;
    }
  }
  checkVector(model, q, function, q_name, kMaxPosition);
  checkVector(model, b, function, b_name);
  checkVector(model, c, function, c_name);
}

/// A fixed-size input (a tip wrench): every entry finite with |x_i| <= kMaxStateValue.
template <typename S, typename Vec>
void checkEntries(const Vec& v, const char* function, const char* name) {
  if constexpr (std::is_floating_point_v<S>) {
    if (!withinRange(v.data(), v.size(), kMaxStateValue))
      rangeError(v.data(), v.size(), kMaxStateValue, function, name);
  }
}

/// A result: every entry finite, else NumericalError naming the function, the output and the entry.
/// x is a plain vector or matrix (contiguous, column-major).
template <typename S, typename Mat>
void checkOutput(const Mat& x, const char* function, const char* name) {
  if constexpr (std::is_floating_point_v<S>) {
    // one branch for the whole result
    const S* p = x.data();
    const Eigen::Index size = x.size();
    if (allFinite(p, size)) return;
    Eigen::Index i = 0;
    while (i + 1 < size && std::isfinite(p[i])) ++i;
    std::string at = std::to_string(i);
    if (x.cols() > 1) at = std::to_string(i % x.rows()) + ", " + std::to_string(i / x.rows());
    throw NumericalError(std::string(function) + ": the result " + name + " has a non-finite entry (" + name +
                         "[" + at + "] = " + formatNumber(static_cast<double>(p[i])) +
                         "): the state or the model is beyond double precision");
  }
}

/// A scalar result (log det, an energy): finite, else NumericalError.
template <typename S>
void checkScalar(const S& x, const char* function, const char* name) {
  if constexpr (std::is_floating_point_v<S>) {
    if (!std::isfinite(x)) {
      throw NumericalError(std::string(function) + ": the result " + name + " is " + formatNumber(x) +
                           ": the state or the model is beyond double precision");
    }
  }
}

/// One pivot's test: positive and finite (false for NaN).
template <typename S>
DENOC_INLINE bool pivotAccepted(const S& d) {
  return d > S(0) && d <= std::numeric_limits<S>::max();
}

/// checkPivots' error for pivots D of which one at least is refused: names the first.
template <typename S, typename Vec>
[[noreturn]] void pivotError(const Vec& D, const char* function) {
  const S* d = D.data();
  const Eigen::Index n = D.size();
  Eigen::Index k = 0;
  while (k + 1 < n && pivotAccepted(d[k])) ++k;
  throw NumericalError(std::string(function) + ": pivot D[" + std::to_string(k) +
                       "] = " + formatNumber(static_cast<double>(d[k])) + " (joint " + std::to_string(k + 1) +
                       ") is not positive and finite: the inertia matrix is not numerically positive "
                       "definite at this state");
}

/// Whether every pivot of D is accepted (pivotAccepted); true for a scalar that is not floating point.
template <typename S, typename Vec>
bool allPivotsAccepted(const Vec& D) {
  if constexpr (std::is_floating_point_v<S>) {
    const S* d = D.data();
    unsigned bad = 0;
    for (Eigen::Index k = 0; k < D.size(); ++k) bad |= static_cast<unsigned>(!pivotAccepted(d[k]));
    return bad == 0;
  } else {
    return true;
  }
}

/// The pivots D_k of a factorization of I(q) (mh_k of the reverse Gaussian elimination): every one positive
/// and finite, else NumericalError naming the function and the joint. The Cholesky route and Fixman's
/// route check theirs the same way (choleskyInPlace, fixmanInvertPivot).
template <typename S, typename Vec>
void checkPivots(const Vec& D, const char* function) {
  if (!allPivotsAccepted<S>(D)) pivotError<S>(D, function);
}

}  // namespace detail
}  // namespace denoc
