// Small 3-D and 6-D building blocks in Saha's notation: twists t = [w; v], wrenches w = [n; f],
// the twist-propagation matrix B_ij = [[1, 0], [c_ij x, 1]] applied without forming it, the joint rotation
// R_i = Rx(alpha_i) Rz(theta_i) applied without forming it, and symmetric 3x3 and 6x6 inertias stored by
// their independent entries; the rate of a rigid inertia carried by a twist (the analytic derivatives).
#pragma once

#include <Eigen/Geometry>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "denoc/fwd.hpp"

namespace denoc {

namespace detail {
/// Two doubles in the lanes of a 16-byte vector (dot6, the derivatives' products), loaded and stored
/// unaligned.
typedef double PairOfLanes __attribute__((vector_size(16), aligned(8)));
DENOC_INLINE PairOfLanes loadPair(const double* p) {
  PairOfLanes v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
DENOC_INLINE void storePair(double* p, const PairOfLanes& v) { std::memcpy(p, &v, sizeof v); }
}  // namespace detail

/// a^T b of two 6-vectors, summed in one order for every scalar type: ((a0 b0 + a2 b2) + a4 b4) +
/// ((a1 b1 + a3 b3) + a5 b5). For double the two brackets are the two lanes of 16-byte vectors (pairs 0-1,
/// 2-3, 4-5: 3 multiplications, 2 additions and one across the lanes), which the compiler does not find in
/// the scalar form; the other types (the SIMD lanes of the batches, the counting and dual scalars) form the
/// same sums one by one, so a batch's lanes and the single call give the same bits. a is read from memory
/// in pairs (a stored vector, such as p_j); b is paired from its entries, because b is typically just
/// computed entry by entry, and a 16-byte load of two 8-byte stores waits for them to retire (no store
/// forwarding): that cost the Panda's I(q) 40 % when both were loaded in pairs.
/// dot6's sum entry by entry, a and b anything indexed 0..5: the form of dot6 for every scalar type but
/// double, and of the sweeps' steps (detail::sweepStep), whose six entries are rows of six arrays.
template <typename S, typename A, typename B>
DENOC_INLINE S dot6Entries(const A& a, const B& b) {
  return ((a[0] * b[0] + a[2] * b[2]) + a[4] * b[4]) + ((a[1] * b[1] + a[3] * b[3]) + a[5] * b[5]);
}

template <typename S>
DENOC_INLINE S dot6(const Eigen::Matrix<S, 6, 1>& a, const Eigen::Matrix<S, 6, 1>& b) {
  if constexpr (std::is_same_v<S, double>) {
    using Pair = detail::PairOfLanes;
    const Pair a01 = detail::loadPair(a.data()), a23 = detail::loadPair(a.data() + 2),
               a45 = detail::loadPair(a.data() + 4);
    const Pair b01 = {b[0], b[1]}, b23 = {b[2], b[3]}, b45 = {b[4], b[5]};
    const Pair s = (a01 * b01 + a23 * b23) + a45 * b45;
    return s[0] + s[1];
  } else {
    return dot6Entries<S>(a, b);
  }
}

/// Cross-product matrix: skew(a) * b == a.cross(b).
template <typename S>
inline Eigen::Matrix<S, 3, 3> skew(const Eigen::Matrix<S, 3, 1>& a) {
  Eigen::Matrix<S, 3, 3> m;
  m << S(0), -a.z(), a.y(), a.z(), S(0), -a.x(), -a.y(), a.x(), S(0);
  return m;
}

/// R * Rz(angle) given cos and sin of the angle: only the first two columns mix (12 multiplications).
template <typename S>
inline void rotateAboutZ(const Eigen::Matrix<S, 3, 3>& R, const S& c, const S& s,
                         Eigen::Matrix<S, 3, 3>& out) {
  out.col(0) = c * R.col(0) + s * R.col(1);
  out.col(1) = c * R.col(1) - s * R.col(0);
  out.col(2) = R.col(2);
}

/// The rotation R = Rx(alpha) Rz(theta) of F_{i-1} <- F_i (model.hpp), kept as two cosine-sine pairs and
/// applied as two plane rotations: R v and R^T v in 8 multiplications, M R in 24.
template <typename S>
struct JointRotation {
  using Vec3 = Eigen::Matrix<S, 3, 1>;
  using Mat3 = Eigen::Matrix<S, 3, 3>;
  S ca, sa;  // cos, sin alpha
  S c, s;    // cos, sin theta

  /// R v: a vector of F_i in F_{i-1}.
  Vec3 operator*(const Vec3& v) const {
    const S x = c * v.x() - s * v.y();  // Rz(theta) v
    const S y = s * v.x() + c * v.y();
    return Vec3(x, ca * y - sa * v.z(), sa * y + ca * v.z());
  }

  /// R^T v: a vector of F_{i-1} in F_i.
  Vec3 transposeTimes(const Vec3& v) const {
    const S y = ca * v.y() + sa * v.z();  // Rx(alpha)^T v
    const S z = ca * v.z() - sa * v.y();
    return Vec3(c * v.x() + s * y, c * y - s * v.x(), z);
  }

  /// M R, e.g. base <- F_i from base <- F_{i-1}: column plane rotations.
  Mat3 rightOf(const Mat3& M) const {
    Mat3 out;
    const Vec3 y = ca * M.col(1) + sa * M.col(2);  // M Rx(alpha)
    out.col(2) = ca * M.col(2) - sa * M.col(1);
    out.col(0) = c * M.col(0) + s * y;  // (M Rx) Rz(theta)
    out.col(1) = c * y - s * M.col(0);
    return out;
  }

  /// R itself (for output and the dense routes).
  Mat3 matrix() const {
    Mat3 R;
    R << c, -s, S(0), ca * s, ca * c, -sa, sa * s, sa * c, ca;
    return R;
  }

  /// R z, the joint axis of F_i in F_{i-1} (independent of theta).
  Vec3 axis() const { return Vec3(S(0), -sa, ca); }
};

/// The rotation F_p <- F_i of a tree's joint, R_i = Rz(gamma_i) Rx(alpha_i) Rz(theta_i) (model.hpp): a
/// JointRotation after a turn gamma_i about the parent's z axis, which only a body's further children have
/// (`turned`; 4 multiplications more per vector then, none otherwise).
template <typename S>
struct TreeJointRotation {
  using Vec3 = Eigen::Matrix<S, 3, 1>;
  using Mat3 = Eigen::Matrix<S, 3, 3>;
  JointRotation<S> r;
  S cg, sg;  // cos, sin gamma
  bool turned;

  Vec3 operator*(const Vec3& v) const {
    const Vec3 y = r * v;
    if (!turned) return y;
    return Vec3(cg * y.x() - sg * y.y(), sg * y.x() + cg * y.y(), y.z());
  }

  Vec3 transposeTimes(const Vec3& v) const {
    if (!turned) return r.transposeTimes(v);
    return r.transposeTimes(Vec3(cg * v.x() + sg * v.y(), cg * v.y() - sg * v.x(), v.z()));
  }

  Mat3 rightOf(const Mat3& M) const {
    if (!turned) return r.rightOf(M);
    Mat3 G;  // M Rz(gamma)
    G.col(0) = cg * M.col(0) + sg * M.col(1);
    G.col(1) = cg * M.col(1) - sg * M.col(0);
    G.col(2) = M.col(2);
    return r.rightOf(G);
  }

  Mat3 matrix() const { return turned ? rightOf(Mat3::Identity()) : r.matrix(); }

  Vec3 axis() const {
    const Vec3 u = r.axis();
    if (!turned) return u;
    return Vec3(-sg * u.y(), cg * u.y(), u.z());
  }
};

/// Motion cross product t x x of a twist t = [w; v] with a twist x = [xa; xl]: [w x xa; w x xl + v x xa]
/// (18 multiplications).
template <typename S>
inline Eigen::Matrix<S, 6, 1> motionCross(const Eigen::Matrix<S, 6, 1>& t, const Eigen::Matrix<S, 6, 1>& x) {
  const Eigen::Matrix<S, 3, 1> w = t.template head<3>(), v = t.template tail<3>();
  const Eigen::Matrix<S, 3, 1> xa = x.template head<3>(), xl = x.template tail<3>();
  Eigen::Matrix<S, 6, 1> y;
  y.template head<3>() = w.cross(xa);
  y.template tail<3>() = w.cross(xl) + v.cross(xa);
  return y;
}

/// Force cross product t x* f of a twist t = [w; v] with a wrench f = [n; f]: [w x n + v x f; w x f]
/// (18 multiplications).
template <typename S>
inline Eigen::Matrix<S, 6, 1> forceCross(const Eigen::Matrix<S, 6, 1>& t, const Eigen::Matrix<S, 6, 1>& f) {
  const Eigen::Matrix<S, 3, 1> w = t.template head<3>(), v = t.template tail<3>();
  const Eigen::Matrix<S, 3, 1> fn = f.template head<3>(), ff = f.template tail<3>();
  Eigen::Matrix<S, 6, 1> y;
  y.template head<3>() = w.cross(fn) + v.cross(ff);
  y.template tail<3>() = w.cross(ff);
  return y;
}

/// A symmetric 3x3 matrix by its six entries.
template <typename S>
struct Sym3 {
  using Vec3 = Eigen::Matrix<S, 3, 1>;
  using Mat3 = Eigen::Matrix<S, 3, 3>;
  S xx, yy, zz, xy, xz, yz;

  static Sym3 zero() { return {S(0), S(0), S(0), S(0), S(0), S(0)}; }
  static Sym3 fromMatrix(const Mat3& m) { return {m(0, 0), m(1, 1), m(2, 2), m(0, 1), m(0, 2), m(1, 2)}; }

  /// A v (9 multiplications).
  Vec3 operator*(const Vec3& v) const {
    return Vec3(xx * v.x() + xy * v.y() + xz * v.z(), xy * v.x() + yy * v.y() + yz * v.z(),
                xz * v.x() + yz * v.y() + zz * v.z());
  }
  Sym3& operator+=(const Sym3& o) {
    xx += o.xx;
    yy += o.yy;
    zz += o.zz;
    xy += o.xy;
    xz += o.xz;
    yz += o.yz;
    return *this;
  }
  Mat3 matrix() const {
    Mat3 m;
    m << xx, xy, xz, xy, yy, yz, xz, yz, zz;
    return m;
  }
};

/// A symmetric 6x6 matrix [[A, H], [H^T, L]] acting on [angular; linear] vectors, with A and L symmetric
/// (21 independent entries). Used for the articulated-body inertias Mh of Saha's reverse Gaussian
/// elimination.
template <typename S>
struct SymInertia6 {
  using Vec3 = Eigen::Matrix<S, 3, 1>;
  using Mat3 = Eigen::Matrix<S, 3, 3>;
  using Vec6 = Eigen::Matrix<S, 6, 1>;
  Sym3<S> A;  // angular-angular block
  Mat3 H;     // angular-linear block
  Sym3<S> L;  // linear-linear block

  void setZero() {
    A = Sym3<S>::zero();
    H.setZero();
    L = Sym3<S>::zero();
  }

  /// y = M x for x = [xa; xl] (36 multiplications).
  Vec6 operator*(const Vec6& x) const {
    const Vec3 xa = x.template head<3>();
    const Vec3 xl = x.template tail<3>();
    Vec6 y;
    y.template head<3>() = A * xa + H * xl;
    y.template tail<3>() = H.transpose() * xa + L * xl;
    return y;
  }

  /// M -= a b^T for a symmetric a b^T (a parallel to b), from its upper triangle (21 multiplications).
  void subtractOuter(const Vec6& a, const Vec6& b) {
    A.xx -= a[0] * b[0];
    A.yy -= a[1] * b[1];
    A.zz -= a[2] * b[2];
    A.xy -= a[0] * b[1];
    A.xz -= a[0] * b[2];
    A.yz -= a[1] * b[2];
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) H(r, c) -= a[r] * b[3 + c];
    }
    L.xx -= a[3] * b[3];
    L.yy -= a[4] * b[4];
    L.zz -= a[5] * b[5];
    L.xy -= a[3] * b[4];
    L.xz -= a[3] * b[5];
    L.yz -= a[4] * b[5];
  }

  /// The dense 6x6 matrix (for tests, output and a floating root's 6 x 6 block).
  Eigen::Matrix<S, 6, 6> dense() const {
    Eigen::Matrix<S, 6, 6> m;
    m << A.matrix(), H, H.transpose(), L.matrix();
    return m;
  }

  SymInertia6& operator+=(const SymInertia6& o) {
    A += o.A;
    H += o.H;
    L += o.L;
    return *this;
  }

  /// M += a rigid inertia [[I, h x], [(h x)^T, m 1]] (RigidInertia, declared below).
  template <typename Rigid>
  void addRigid(const Rigid& r) {
    A += r.I;
    H(0, 1) -= r.h.z();
    H(0, 2) += r.h.y();
    H(1, 0) += r.h.z();
    H(1, 2) -= r.h.x();
    H(2, 0) -= r.h.y();
    H(2, 1) += r.h.x();
    L.xx += r.m;
    L.yy += r.m;
    L.zz += r.m;
  }
};

/// Spatial inertia of a rigid body (or of a composite of rigid bodies) about a reference point P, in the
/// [angular; linear] order of Saha's twists: [[I_P, h x], [(h x)^T, m 1]], with h = m * (C - P) the first
/// moment and I_P the rotational inertia about P. Sums of rigid-body inertias about one point stay in this
/// form.
template <typename S>
struct RigidInertia {
  using Vec3 = Eigen::Matrix<S, 3, 1>;
  using Mat3 = Eigen::Matrix<S, 3, 3>;
  S m;
  Vec3 h;
  Sym3<S> I;  // about P

  /// y = M x for x = [w; v]: angular part I w + h x v, linear part m v - h x w (24 multiplications).
  Eigen::Matrix<S, 6, 1> operator*(const Eigen::Matrix<S, 6, 1>& x) const {
    const Vec3 w = x.template head<3>();
    const Vec3 v = x.template tail<3>();
    Eigen::Matrix<S, 6, 1> y;
    y.template head<3>() = I * w + h.cross(v);
    y.template tail<3>() = m * v - h.cross(w);
    return y;
  }

  RigidInertia& operator+=(const RigidInertia& o) {
    m += o.m;
    h += o.h;
    I += o.I;
    return *this;
  }

  Eigen::Matrix<S, 6, 6> dense() const {
    Eigen::Matrix<S, 6, 6> M;
    const Mat3 hx = skew(h);
    M << I.matrix(), hx, hx.transpose(), m * Mat3::Identity();
    return M;
  }
};

namespace detail {

/// dM/dt of a rigid inertia M = (m, h, I) about a fixed point (the base origin of a chain, the world origin
/// of a tree) moving with the twist t = [w; v] referred to that point (v: the velocity of the body point
/// there): t x* M - M t x, which keeps the rigid form with mass rate 0, first-moment rate m v + w x h (the
/// linear part of the momentum M t: not computed here) and rotational rate
///   Idot = W I - I W + 2 (h . v) 1 - (v h^T + h v^T)     (W: the cross-product matrix of w).
/// 34 multiplications.
template <typename S>
DENOC_INLINE void inertiaRate(const RigidInertia<S>& M, const typename Types<S>::Vec6& t, Sym3<S>& Idot) {
  using Vec3 = typename Types<S>::Vec3;
  const Vec3 w = t.template head<3>(), v = t.template tail<3>();
  const Sym3<S>& I = M.I;
  const Vec3& h = M.h;
  const S hv = S(2) * h.dot(v);
  const S x = w.x(), y = w.y(), z = w.z();
  // W I - I W = W I + (W I)^T, entry by entry
  Idot.xx = S(2) * (y * I.xz - z * I.xy) + hv - S(2) * v.x() * h.x();
  Idot.yy = S(2) * (z * I.xy - x * I.yz) + hv - S(2) * v.y() * h.y();
  Idot.zz = S(2) * (x * I.yz - y * I.xz) + hv - S(2) * v.z() * h.z();
  Idot.xy = z * (I.xx - I.yy) + y * I.yz - x * I.xz - (v.x() * h.y() + h.x() * v.y());
  Idot.xz = y * (I.zz - I.xx) + x * I.xy - z * I.yz - (v.x() * h.z() + h.x() * v.z());
  Idot.yz = x * (I.yy - I.zz) + z * I.xz - y * I.xy - (v.y() * h.z() + h.y() * v.z());
}

/// The two parts of Bt x = (Mtdot + ht x*) x, the matrix Bt of the derivations (docs/planning.md; trees:
/// docs/algorithms.md, "Derivatives over a tree"), for the composite rate (hdot, Idot) and momentum ht,
/// without forming Bt: the rate part r = Mtdot x (symmetric in x) and the momentum part c = x x* ht (skew),
/// so that Bt x = r + c and Bt^T x = r - c. 39 multiplications.
template <typename S>
DENOC_INLINE void coriolisParts(const typename Types<S>::Vec3& hdot, const Sym3<S>& Idot,
                                const typename Types<S>::Vec6& ht, const typename Types<S>::Vec6& x,
                                typename Types<S>::Vec6& r, typename Types<S>::Vec6& c) {
  using Vec3 = typename Types<S>::Vec3;
  const Vec3 xa = x.template head<3>(), xl = x.template tail<3>();
  const Vec3 ha = ht.template head<3>(), hl = ht.template tail<3>();
  // x x* ht = [xa x ha + xl x hl; xa x hl]
  c << xa.cross(ha) + xl.cross(hl), xa.cross(hl);
  // Mtdot x = [Idot xa + hdot x xl; -hdot x xa]
  r << Idot * xa + hdot.cross(xl), xa.cross(hdot);
}

}  // namespace detail

}  // namespace denoc
