// Lanes<W>: W doubles computed together, one per SIMD lane, as a scalar type for the core's algorithm
// templates (ModelTpl<Lanes<W>>, DataTpl<Lanes<W>>): W states of one model run through the unchanged
// scalar-templated recursions at once, lane l holding state l (structure of arrays).
//
// Why not std::experimental::simd. Its implementation is chosen by the preprocessor from the translation
// unit's -m flags (__AVX2__, __AVX512F__): the same type, simd<double, fixed_size<4>>, then has different
// code in differently compiled translation units (an ODR violation the linker resolves by keeping one copy,
// possibly an AVX-512 one for every caller), and inside a function compiled for AVX2 by a target attribute
// it still uses the translation unit's baseline code. This type is a thin wrapper over a GCC vector
// extension instead: the compiler lowers its operations for whatever ISA the function being compiled
// targets, so one translation unit built for baseline x86-64 holds kernels for SSE2, AVX2 and AVX-512 (see
// core/src/batch_kernels.cpp and docs/batches.md).
//
// What the algorithms may do with it: arithmetic (+ - * / and unary -), construction from a double
// (broadcast to every lane), sincos, sqrt and log through argument-dependent lookup. There are deliberately
// no comparison operators: a branch on a value would have to agree across lanes, and an algorithm that
// branches on a value does not compile with this type instead of silently taking one lane's branch for all.
#pragma once

#include <Eigen/Core>
#include <bit>
#include <cmath>
#include <cstdint>

#include "denoc/sincos.hpp"

namespace denoc::simd {

namespace detail {
template <int W>
struct VectorOf;
// 8-byte alignment: Eigen's dynamic storage is aligned to 16 bytes only, so the types promise no more than
// a double does and the compiler emits unaligned loads (as fast as aligned ones on aligned data)
template <>
struct VectorOf<2> {
  typedef double type __attribute__((vector_size(16), aligned(8)));
  typedef std::uint64_t itype __attribute__((vector_size(16), aligned(8)));
};
template <>
struct VectorOf<4> {
  typedef double type __attribute__((vector_size(32), aligned(8)));
  typedef std::uint64_t itype __attribute__((vector_size(32), aligned(8)));
};
template <>
struct VectorOf<8> {
  typedef double type __attribute__((vector_size(64), aligned(8)));
  typedef std::uint64_t itype __attribute__((vector_size(64), aligned(8)));
};

/// The bits of |x| in every lane, as unsigned integers: ordered as |x| is for every x that is not NaN, and
/// a NaN's above infinity's. Magnitudes are compared this way, by integer subtraction, not by comparing
/// doubles: AVX-512F alone (the 8-lane kernels) has no instruction that turns the mask of a comparison of
/// doubles into a vector, and GCC then compares lane by lane in general registers.
template <int W>
DENOC_INLINE typename VectorOf<W>::itype magnitudeBits(const typename VectorOf<W>::type& x) {
  using U = typename VectorOf<W>::itype;
  return std::bit_cast<U>(x) & (U{} + 0x7fffffffffffffffu);
}
}  // namespace detail

/// W doubles, one per lane; see the file comment.
template <int W>
struct Lanes {
  using V = typename detail::VectorOf<W>::type;
  static constexpr int kWidth = W;
  V v;

  Lanes() = default;
  // copies as one vector move: the compiler copies a struct of reduced alignment piecewise (16 bytes at a
  // time), and a 32- or 64-byte load of what was just stored in pieces stalls (no store forwarding)
  Lanes(const Lanes& o) : v(o.v) {}
  Lanes& operator=(const Lanes& o) {
    v = o.v;
    return *this;
  }
  Lanes(double x) : v(V{} + x) {}  // NOLINT(google-explicit-constructor): S(0), S(2) * x in the algorithms
  explicit Lanes(V x) : v(x) {}

  double operator[](int lane) const { return v[lane]; }
  double& operator[](int lane) { return v[lane]; }

  Lanes& operator+=(Lanes o) {
    v += o.v;
    return *this;
  }
  Lanes& operator-=(Lanes o) {
    v -= o.v;
    return *this;
  }
  Lanes& operator*=(Lanes o) {
    v *= o.v;
    return *this;
  }
  Lanes& operator/=(Lanes o) {
    v /= o.v;
    return *this;
  }
  friend Lanes operator+(Lanes a, Lanes b) { return Lanes(a.v + b.v); }
  friend Lanes operator-(Lanes a, Lanes b) { return Lanes(a.v - b.v); }
  friend Lanes operator*(Lanes a, Lanes b) { return Lanes(a.v * b.v); }
  friend Lanes operator/(Lanes a, Lanes b) { return Lanes(a.v / b.v); }
  friend Lanes operator-(Lanes a) { return Lanes(-a.v); }
  friend Lanes operator+(Lanes a) { return a; }

  /// The logarithm lane by lane (the generic templates name it; the batch kernels take log det lane by
  /// lane with the double function instead).
  friend Lanes log(Lanes a) {
    for (int l = 0; l < W; ++l) a.v[l] = std::log(a.v[l]);
    return a;
  }

  /// The square root lane by lane, correctly rounded as std::sqrt is (the tree kernels: a floating root's
  /// quaternion norm, the Cholesky factor of its 6 x 6 block).
  friend Lanes sqrt(Lanes a) {
    for (int l = 0; l < W; ++l) a.v[l] = std::sqrt(a.v[l]);
    return a;
  }
};
static_assert(alignof(Lanes<8>) == alignof(double) && sizeof(Lanes<8>) == 64);

/// s[i] = sin x[i], c[i] = cos x[i] in every lane for i < n, the same operations as sincos(double) lane by
/// lane (found by argument-dependent lookup from the algorithms' loop over the joint angles): the reduction
/// and the polynomials in all lanes at once, one range check for all, then the C library for the lanes of
/// magnitude 10^5 or more or not finite. This pass differs from the scalar one in that per-lane branch only.
template <int W>
inline void sincos(const Lanes<W>* x, Lanes<W>* s, Lanes<W>* c, int n) {
  using U = typename detail::VectorOf<W>::itype;
  using V = typename Lanes<W>::V;
  // |x| < 10^5 exactly when magnitudeBits(x) is below the bits of 10^5, i.e. when their difference is
  // negative: the sign bit of `in_range` stays set in a lane while every x is within the range
  const U limit_bits = U{} + std::bit_cast<std::uint64_t>(1e5);
  U in_range = U{} + (std::uint64_t{1} << 63);
  for (int i = 0; i < n; ++i) {
    const auto r = denoc::detail::sincosReducedT<V, U>(x[i].v);
    s[i].v = r.s;
    c[i].v = r.c;
    in_range &= detail::magnitudeBits<W>(x[i].v) - limit_bits;
  }
  std::uint64_t all = ~std::uint64_t{0};
  for (int l = 0; l < W; ++l) all &= in_range[l];
  if (all >> 63) return;
  for (int i = 0; i < n; ++i) {
    for (int l = 0; l < W; ++l) {
      const double xi = x[i].v[l];
      if (!(std::abs(xi) < 1e5)) {
        s[i].v[l] = std::sin(xi);
        c[i].v[l] = std::cos(xi);
      }
    }
  }
}

/// The same for one lane value.
template <int W>
inline void sincos(const Lanes<W>& x, Lanes<W>& s, Lanes<W>& c) {
  sincos(&x, &s, &c, 1);
}

}  // namespace denoc::simd

namespace Eigen {

template <int W>
struct NumTraits<denoc::simd::Lanes<W>> : NumTraits<double> {
  using Real = denoc::simd::Lanes<W>;
  using NonInteger = denoc::simd::Lanes<W>;
  using Nested = denoc::simd::Lanes<W>;
  using Literal = denoc::simd::Lanes<W>;
  enum {
    IsComplex = 0,
    IsInteger = 0,
    IsSigned = 1,
    RequireInitialization = 0,
    ReadCost = 1,
    AddCost = 1,
    MulCost = 1
  };
};

}  // namespace Eigen
