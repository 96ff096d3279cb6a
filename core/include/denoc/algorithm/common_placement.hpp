// The placement of a chain's frames in the common frame F_{-1}, link by link (Saha 1999, section 3: every
// quantity of the composite-body and elimination routes in one frame): R0_i = R0_{i-1} R_i, O_i = O_{i-1} +
// R0_{i-1} s_i, the joint's motion vector p_i and the link's inertia M_i about the base origin.
//
// CommonPlacement<S> carries (R0, O) from one joint to the next. For double it holds each column of R0 and
// O as the pair (x, y) in the two lanes of a 16-byte vector and z alone: one two-lane operation where the
// entry-by-entry form takes two. Its entries are the same sums in the same order as the entry-by-entry
// form's (Eigen's sums of three, a0 b0 + (a1 b1 + a2 b2)), so both give the same bits
// (tests/core/test_common_placement.cpp).
#pragma once

#include <type_traits>

#include "denoc/data.hpp"
#include "denoc/model.hpp"
#include "denoc/spatial.hpp"

namespace denoc {
namespace detail {

/// Placement of F_i in the common frame from that of F_{i-1} (a tree: of the parent's frame), R0_in and
/// O_in: R0_i = R0_{i-1} R_i (24 multiplications with R_i = Rx(alpha_i) Rz(theta_i)), O_i = O_{i-1} +
/// R0_{i-1} s_i. For i = 0 (first), R0_{-1} = 1 and O_{-1} = 0. The outputs may be the inputs.
template <typename S, typename Rot>
DENOC_INLINE void placeCommon(const Rot& R, const typename Types<S>::Vec3& s_q, bool first,
                              const typename Types<S>::Mat3& R0_in, const typename Types<S>::Vec3& O_in,
                              typename Types<S>::Mat3& R0, typename Types<S>::Vec3& O) {
  if (first) {
    R0 = R.matrix();
    O = s_q;
  } else {
    O = O_in + R0_in * s_q;
    R0 = R.rightOf(R0_in);
  }
}

/// placeCommon in place: (R0, O) of F_{i-1} become those of F_i.
template <typename S>
DENOC_INLINE void placeCommon(const JointRotation<S>& R, const typename Types<S>::Vec3& s_q, bool first,
                              typename Types<S>::Mat3& R0, typename Types<S>::Vec3& O) {
  placeCommon<S>(R, s_q, first, R0, O, R0, O);
}

/// p_i in the common frame: [e_i; O_i x e_i] (revolute) or [0; e_i] (prismatic), e_i = R0_i z.
template <typename S>
DENOC_INLINE typename Types<S>::Vec6 jointVector(bool revolute, const typename Types<S>::Mat3& R0,
                                                 const typename Types<S>::Vec3& O) {
  using Vec3 = typename Types<S>::Vec3;
  const Vec3 e = R0.col(2);
  typename Types<S>::Vec6 p;
  if (revolute) {
    p << e, O.cross(e);
  } else {
    p << Vec3::Zero(), e;
  }
  return p;
}

/// Link inertia M_i about the base origin in base axes (51 multiplications): with [d, v1, v2] rotated by
/// R0_i, the mass center is C = O_i + R0 d, h = m C, and
/// I = lambda 1 + v1 v1^T + v2 v2^T + m (|C|^2 1 - C C^T)   (rotated inertia plus the parallel-axis term).
template <typename S>
DENOC_INLINE RigidInertia<S> linkInertiaCommon(const JointConstants<S>& jc, const typename Types<S>::Mat3& R0,
                                               const typename Types<S>::Vec3& O) {
  using Vec3 = typename Types<S>::Vec3;
  const typename Types<S>::Mat3 X = R0 * jc.dv;
  const Vec3 C = O + X.col(0);
  const Vec3 v1 = X.col(1), v2 = X.col(2);
  RigidInertia<S> M;
  M.m = jc.m;
  M.h = jc.m * C;
  const S d = jc.lambda + M.h.dot(C);
  M.I.xx = d + v1.x() * v1.x() + v2.x() * v2.x() - M.h.x() * C.x();
  M.I.yy = d + v1.y() * v1.y() + v2.y() * v2.y() - M.h.y() * C.y();
  M.I.zz = d + v1.z() * v1.z() + v2.z() * v2.z() - M.h.z() * C.z();
  M.I.xy = v1.x() * v1.y() + v2.x() * v2.y() - M.h.x() * C.y();
  M.I.xz = v1.x() * v1.z() + v2.x() * v2.z() - M.h.x() * C.z();
  M.I.yz = v1.y() * v1.z() + v2.y() * v2.z() - M.h.y() * C.z();
  return M;
}

/// The placement of one link's frame F_link in the common frame (F_{-1} <- F_link, origin O_link), which
/// commonPlacementsAndInertias leaves on request.
template <typename S>
struct KeptPlacement {
  int link = -1;
  typename Types<S>::Mat3 R0;
  typename Types<S>::Vec3 O;
};

/// (R0_i, O_i) carried down a chain, entry by entry: placeCommon, jointVector and linkInertiaCommon. A tree
/// (tree_local.hxx) restarts it from a branch point's stored placement and turns a further child by gamma.
template <typename S>
struct CommonPlacement {
  using Vec3 = typename Types<S>::Vec3;
  using Mat3 = typename Types<S>::Mat3;
  Mat3 R0 = Mat3::Identity();  // F_{-1}
  Vec3 O = Vec3::Zero();

  CommonPlacement() = default;
  /// At a stored placement (a tree's branch point).
  CommonPlacement(const Mat3& R0_in, const Vec3& O_in) : R0(R0_in), O(O_in) {}

  /// F_{i-1} -> F_i (first: i = 0; a tree: F_parent -> F_i, first for a child of the root link).
  template <typename Rot>
  DENOC_INLINE void next(const Rot& R, const Vec3& s_q, bool first) {
    placeCommon<S>(R, s_q, first, R0, O, R0, O);
  }
  DENOC_INLINE typename Types<S>::Vec6 jointVector(bool revolute) const {
    return detail::jointVector<S>(revolute, R0, O);
  }
  DENOC_INLINE RigidInertia<S> linkInertia(const JointConstants<S>& jc) const {
    return linkInertiaCommon(jc, R0, O);
  }
  DENOC_INLINE Mat3 rotation() const { return R0; }
  DENOC_INLINE Vec3 origin() const { return O; }
};

/// A 3-vector as the pair (x, y) and z.
struct PairVec3 {
  PairOfLanes xy;
  double z;
};

DENOC_INLINE PairOfLanes both(double a) { return PairOfLanes{a, a}; }

/// a u + b v
DENOC_INLINE PairVec3 plus(double a, const PairVec3& u, double b, const PairVec3& v) {
  return {both(a) * u.xy + both(b) * v.xy, a * u.z + b * v.z};
}

/// a u - b v
DENOC_INLINE PairVec3 minus(double a, const PairVec3& u, double b, const PairVec3& v) {
  return {both(a) * u.xy - both(b) * v.xy, a * u.z - b * v.z};
}

/// [c0 c1 c2] v = c0 v0 + (c1 v1 + c2 v2), Eigen's order for a 3x3 matrix times a vector.
DENOC_INLINE PairVec3 times(const PairVec3& c0, const PairVec3& c1, const PairVec3& c2, double v0, double v1,
                            double v2) {
  return {c0.xy * both(v0) + (c1.xy * both(v1) + c2.xy * both(v2)), c0.z * v0 + (c1.z * v1 + c2.z * v2)};
}

/// (R0_i, O_i) carried down a chain for double, each column of R0 and O as a PairVec3: the same entries as
/// the general form's, with fewer arithmetic instructions (the 3 x 3 products, the rotation of [d, v1, v2]
/// and the inertia's diagonal and last column in two lanes; 10 % fewer instructions in all for I(q)).
template <>
struct CommonPlacement<double> {
  using Vec3 = Types<double>::Vec3;
  using Mat3 = Types<double>::Mat3;
  // the columns of R0, and O; F_{-1} as the general form starts
  PairVec3 c0{PairOfLanes{1.0, 0.0}, 0.0}, c1{PairOfLanes{0.0, 1.0}, 0.0}, c2{PairOfLanes{0.0, 0.0}, 1.0},
      O{PairOfLanes{0.0, 0.0}, 0.0};

  CommonPlacement() = default;
  CommonPlacement(const Mat3& R0, const Vec3& O_in)
      : c0{PairOfLanes{R0(0, 0), R0(1, 0)}, R0(2, 0)},
        c1{PairOfLanes{R0(0, 1), R0(1, 1)}, R0(2, 1)},
        c2{PairOfLanes{R0(0, 2), R0(1, 2)}, R0(2, 2)},
        O{PairOfLanes{O_in.x(), O_in.y()}, O_in.z()} {}

  DENOC_INLINE void next(const JointRotation<double>& R, const Vec3& s_q, bool first) {
    if (first) {  // R.matrix()
      const double ca = R.ca, sa = R.sa, c = R.c, s = R.s;
      c0 = {PairOfLanes{c, ca * s}, sa * s};
      c1 = {PairOfLanes{-s, ca * c}, sa * c};
      c2 = {PairOfLanes{0.0, -sa}, ca};
      O = {PairOfLanes{s_q.x(), s_q.y()}, s_q.z()};
      return;
    }
    move(s_q);
    rotate(R);
  }

  /// A tree's joint: R = Rz(gamma) R_i for a turned child, as TreeJointRotation::rightOf (first: R.matrix(),
  /// the same turn and rotation of the identity's columns).
  DENOC_INLINE void next(const TreeJointRotation<double>& R, const Vec3& s_q, bool first) {
    if (!R.turned) return next(R.r, s_q, first);
    if (first) {
      *this = CommonPlacement{};
      O = {PairOfLanes{s_q.x(), s_q.y()}, s_q.z()};
    } else {
      move(s_q);
    }
    const PairVec3 g0 = plus(R.cg, c0, R.sg, c1);  // R0 Rz(gamma)
    c1 = minus(R.cg, c1, R.sg, c0);
    c0 = g0;
    rotate(R.r);
  }

  DENOC_INLINE Types<double>::Vec6 jointVector(bool revolute) const {
    Types<double>::Vec6 p;
    if (revolute) {
      p << c2.xy[0], c2.xy[1], c2.z, O.xy[1] * c2.z - O.z * c2.xy[1], O.z * c2.xy[0] - O.xy[0] * c2.z,
          O.xy[0] * c2.xy[1] - O.xy[1] * c2.xy[0];
    } else {
      p << 0.0, 0.0, 0.0, c2.xy[0], c2.xy[1], c2.z;
    }
    return p;
  }

  DENOC_INLINE RigidInertia<double> linkInertia(const JointConstants<double>& jc) const {
    const double* dv = jc.dv.data();  // column-major: d, v1, v2
    const PairVec3 X0 = times(c0, c1, c2, dv[0], dv[1], dv[2]);
    const PairVec3 v1 = times(c0, c1, c2, dv[3], dv[4], dv[5]);
    const PairVec3 v2 = times(c0, c1, c2, dv[6], dv[7], dv[8]);
    const PairVec3 C = {O.xy + X0.xy, O.z + X0.z};
    const PairVec3 h = {both(jc.m) * C.xy, jc.m * C.z};
    const PairOfLanes hC = h.xy * C.xy;
    const double d = jc.lambda + (hC[0] + (hC[1] + h.z * C.z));
    const PairOfLanes diag = both(d) + v1.xy * v1.xy + v2.xy * v2.xy - h.xy * C.xy;       // xx, yy
    const PairOfLanes last = v1.xy * both(v1.z) + v2.xy * both(v2.z) - h.xy * both(C.z);  // xz, yz
    RigidInertia<double> M;
    M.m = jc.m;
    M.h = Vec3(h.xy[0], h.xy[1], h.z);
    M.I.xx = diag[0];
    M.I.yy = diag[1];
    M.I.zz = d + v1.z * v1.z + v2.z * v2.z - h.z * C.z;
    M.I.xy = v1.xy[0] * v1.xy[1] + v2.xy[0] * v2.xy[1] - h.xy[0] * C.xy[1];
    M.I.xz = last[0];
    M.I.yz = last[1];
    return M;
  }

  DENOC_INLINE Mat3 rotation() const {
    Mat3 R0;
    R0 << c0.xy[0], c1.xy[0], c2.xy[0], c0.xy[1], c1.xy[1], c2.xy[1], c0.z, c1.z, c2.z;
    return R0;
  }
  DENOC_INLINE Vec3 origin() const { return Vec3(O.xy[0], O.xy[1], O.z); }

 private:
  /// O_i = O_{i-1} + R0_{i-1} s_i
  DENOC_INLINE void move(const Vec3& s_q) {
    const PairVec3 Rs = times(c0, c1, c2, s_q.x(), s_q.y(), s_q.z());
    O = {O.xy + Rs.xy, O.z + Rs.z};
  }
  /// R0 <- R0 R (JointRotation::rightOf)
  DENOC_INLINE void rotate(const JointRotation<double>& R) {
    const double ca = R.ca, sa = R.sa, c = R.c, s = R.s;
    const PairVec3 y = plus(ca, c1, sa, c2);
    c2 = minus(ca, c2, sa, c1);
    c1 = minus(c, y, s, c0);
    c0 = plus(c, c0, s, y);
  }
};

}  // namespace detail
}  // namespace denoc
