// A scalar type that wraps a double and counts the arithmetic it performs, to reproduce the operation-count
// tables of the papers (Saha 1999, Tables 1 and 2) from the templated algorithms. Test and benchmark code
// only.
//
// Every operation the algorithm performs is counted, including multiplications by a structural 0 or 1
// (nothing is elided). Multiplications and divisions are counted apart (the papers add them up as "M");
// additions and subtractions together ("A"); a negation is counted on its own (the papers do not count sign
// changes). sqrt, sin, cos and log calls have their own counters. Comparisons are not counted.
//
// The counters are thread_local: reset them, run one algorithm, read them.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>

namespace denoc::testing {

/// What one run of an algorithm cost.
struct OpCounts {
  std::uint64_t mul = 0;   // multiplications
  std::uint64_t div = 0;   // divisions
  std::uint64_t add = 0;   // additions and subtractions
  std::uint64_t neg = 0;   // negations (unary minus)
  std::uint64_t sqrt = 0;  // square roots
  std::uint64_t sin = 0;
  std::uint64_t cos = 0;
  std::uint64_t log = 0;
  std::uint64_t other = 0;  // any other math function (abs, ...)

  /// The papers' "M": multiplications or divisions.
  std::uint64_t mulDiv() const { return mul + div; }

  friend OpCounts operator-(const OpCounts& a, const OpCounts& b) {
    OpCounts d;
    d.mul = a.mul - b.mul;
    d.div = a.div - b.div;
    d.add = a.add - b.add;
    d.neg = a.neg - b.neg;
    d.sqrt = a.sqrt - b.sqrt;
    d.sin = a.sin - b.sin;
    d.cos = a.cos - b.cos;
    d.log = a.log - b.log;
    d.other = a.other - b.other;
    return d;
  }
  friend bool operator==(const OpCounts&, const OpCounts&) = default;
};

/// The running counters of this thread.
inline OpCounts& opCounts() {
  thread_local OpCounts counts;
  return counts;
}

inline void resetOpCounts() { opCounts() = OpCounts{}; }

/// A double that counts its arithmetic in opCounts().
class CountingScalar {
 public:
  CountingScalar() = default;
  // implicit from arithmetic values, as the algorithms write S(0), S(2) * x, ...
  CountingScalar(double v) : v_(v) {}  // NOLINT(google-explicit-constructor)
  explicit operator double() const { return v_; }
  double value() const { return v_; }

  CountingScalar& operator+=(const CountingScalar& o) {
    ++opCounts().add;
    v_ += o.v_;
    return *this;
  }
  CountingScalar& operator-=(const CountingScalar& o) {
    ++opCounts().add;
    v_ -= o.v_;
    return *this;
  }
  CountingScalar& operator*=(const CountingScalar& o) {
    ++opCounts().mul;
    v_ *= o.v_;
    return *this;
  }
  CountingScalar& operator/=(const CountingScalar& o) {
    ++opCounts().div;
    v_ /= o.v_;
    return *this;
  }

  friend CountingScalar operator+(const CountingScalar& a, const CountingScalar& b) {
    ++opCounts().add;
    return CountingScalar(a.v_ + b.v_);
  }
  friend CountingScalar operator-(const CountingScalar& a, const CountingScalar& b) {
    ++opCounts().add;
    return CountingScalar(a.v_ - b.v_);
  }
  friend CountingScalar operator*(const CountingScalar& a, const CountingScalar& b) {
    ++opCounts().mul;
    return CountingScalar(a.v_ * b.v_);
  }
  friend CountingScalar operator/(const CountingScalar& a, const CountingScalar& b) {
    ++opCounts().div;
    return CountingScalar(a.v_ / b.v_);
  }
  friend CountingScalar operator-(const CountingScalar& a) {
    ++opCounts().neg;
    return CountingScalar(-a.v_);
  }
  friend CountingScalar operator+(const CountingScalar& a) { return a; }

  friend bool operator==(const CountingScalar& a, const CountingScalar& b) { return a.v_ == b.v_; }
  friend bool operator!=(const CountingScalar& a, const CountingScalar& b) { return a.v_ != b.v_; }
  friend bool operator<(const CountingScalar& a, const CountingScalar& b) { return a.v_ < b.v_; }
  friend bool operator<=(const CountingScalar& a, const CountingScalar& b) { return a.v_ <= b.v_; }
  friend bool operator>(const CountingScalar& a, const CountingScalar& b) { return a.v_ > b.v_; }
  friend bool operator>=(const CountingScalar& a, const CountingScalar& b) { return a.v_ >= b.v_; }

  // math functions, found by argument-dependent lookup (the algorithms write `using std::sin; sin(x)`)
  friend CountingScalar sqrt(const CountingScalar& a) {
    ++opCounts().sqrt;
    return CountingScalar(std::sqrt(a.v_));
  }
  friend CountingScalar sin(const CountingScalar& a) {
    ++opCounts().sin;
    return CountingScalar(std::sin(a.v_));
  }
  friend CountingScalar cos(const CountingScalar& a) {
    ++opCounts().cos;
    return CountingScalar(std::cos(a.v_));
  }
  friend CountingScalar log(const CountingScalar& a) {
    ++opCounts().log;
    return CountingScalar(std::log(a.v_));
  }
  friend CountingScalar abs(const CountingScalar& a) {
    ++opCounts().other;
    return CountingScalar(std::abs(a.v_));
  }
  friend CountingScalar fabs(const CountingScalar& a) { return abs(a); }
  friend CountingScalar exp(const CountingScalar& a) {
    ++opCounts().other;
    return CountingScalar(std::exp(a.v_));
  }
  friend CountingScalar atan2(const CountingScalar& a, const CountingScalar& b) {
    ++opCounts().other;
    return CountingScalar(std::atan2(a.v_, b.v_));
  }
  friend CountingScalar pow(const CountingScalar& a, const CountingScalar& b) {
    ++opCounts().other;
    return CountingScalar(std::pow(a.v_, b.v_));
  }
  friend bool isfinite(const CountingScalar& a) { return std::isfinite(a.v_); }
  friend bool isnan(const CountingScalar& a) { return std::isnan(a.v_); }
  friend bool isinf(const CountingScalar& a) { return std::isinf(a.v_); }

  friend std::ostream& operator<<(std::ostream& os, const CountingScalar& a) { return os << a.v_; }

 private:
  double v_ = 0.0;
};

}  // namespace denoc::testing

namespace Eigen {

template <>
struct NumTraits<denoc::testing::CountingScalar> : NumTraits<double> {
  using Real = denoc::testing::CountingScalar;
  using NonInteger = denoc::testing::CountingScalar;
  using Nested = denoc::testing::CountingScalar;
  using Literal = denoc::testing::CountingScalar;
  enum {
    IsComplex = 0,
    IsInteger = 0,
    IsSigned = 1,
    RequireInitialization = 1,
    ReadCost = 1,
    AddCost = 1,
    MulCost = 1
  };
  static Real epsilon() { return Real(std::numeric_limits<double>::epsilon()); }
  static Real dummy_precision() { return Real(1e-12); }
  static Real highest() { return Real(std::numeric_limits<double>::max()); }
  static Real lowest() { return Real(std::numeric_limits<double>::lowest()); }
  static int digits10() { return std::numeric_limits<double>::digits10; }
};

// products and sums of a CountingScalar expression with double constants
template <typename BinaryOp>
struct ScalarBinaryOpTraits<denoc::testing::CountingScalar, double, BinaryOp> {
  using ReturnType = denoc::testing::CountingScalar;
};
template <typename BinaryOp>
struct ScalarBinaryOpTraits<double, denoc::testing::CountingScalar, BinaryOp> {
  using ReturnType = denoc::testing::CountingScalar;
};

}  // namespace Eigen
