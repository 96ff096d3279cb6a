// Common types of the denoc core library.
#pragma once

#include <Eigen/Core>
#include <cstdint>

#include "denoc/config.hpp"  // the build configuration users must agree on, checked

// The recursions are written as small inline steps (one joint, one 3-vector operation); the compiler must
// inline all of them into the sweep that calls them, which GCC's size heuristics do not always do on their
// own. DENOC_FLATTEN on a sweep inlines everything it calls; DENOC_INLINE forces one function inline.
// Under AddressSanitizer (GCC defines __SANITIZE_ADDRESS__) the sweeps are not flattened: instrumenting the
// one huge function that flattening makes took GCC tens of minutes per file.
#if defined(__SANITIZE_ADDRESS__)
#define DENOC_FLATTEN
#define DENOC_INLINE inline __attribute__((always_inline))
#elif defined(__GNUC__) || defined(__clang__)
#define DENOC_FLATTEN __attribute__((flatten))
#define DENOC_INLINE inline __attribute__((always_inline))
#else
#define DENOC_FLATTEN
#define DENOC_INLINE inline
#endif

// DENOC_INDEPENDENT before a loop: no iteration reads what another writes, so the compiler may run them in
// SIMD lanes. GCC does not read __restrict on local pointers as that promise, and gives up on a loop over
// several arrays at its limit of 10 run-time overlap checks (I^-1 by the sweeps: seven arrays, left scalar).
#if defined(__clang__)
#define DENOC_INDEPENDENT _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define DENOC_INDEPENDENT _Pragma("GCC ivdep")
#else
#define DENOC_INDEPENDENT
#endif

// DENOC_UNROLL before a loop: unroll it up to 24 times, completely where its trip count is a compile-time
// constant no larger (the fixed-size kernels of detail::withJointCount, through detail::forJoints).
#if defined(__clang__)
#define DENOC_UNROLL _Pragma("unroll 24")
#elif defined(__GNUC__)
#define DENOC_UNROLL _Pragma("GCC unroll 24")
#else
#define DENOC_UNROLL
#endif

namespace denoc {

/// Kind of a 1-DOF joint.
enum class JointType : std::uint8_t { Revolute, Prismatic };

/// The joint between the world and a model's root link (docs/trees.md):
///  - Fixed: the root link is the world-fixed base;
///  - Floating: six coordinates, q = [x y z | qx qy qz qw] (position of the root link's origin in the world,
///  then
///    the unit quaternion world <- root link, vector part first), v = [w; v] the root link's angular velocity
///    and its origin's velocity, both in the root link's axes; the root's generalized force is the wrench
///    [moment; force] about the root link's origin in its axes;
///  - Planar: q = v = [x y yaw], the root link moves in the world's x-y plane (origin (x, y, 0), turned by
///  yaw
///    about the world z axis); its generalized force is [f_x f_y n_z] in world axes.
/// The root's coordinates come first in q and v; they are never actuated.
enum class RootJoint : std::uint8_t { Fixed, Floating, Planar };

/// The axes a Jacobian, (dJ/dt) qd, an operational-space inertia or an external wrench is expressed in.
enum class ReferenceFrame : std::uint8_t {
  Base,   // the user's base frame, the world of a tree (Pinocchio's LOCAL_WORLD_ALIGNED)
  Local,  // the axes of the frame the point is given in (Pinocchio's LOCAL)
};

/// How forward dynamics is computed (batches, simulation, the service): forward_route.hpp dispatches it.
enum class ForwardRoute : std::uint8_t {
  Saha,      // O(n) three sweeps (forwardDynamics)
  Cholesky,  // I(q) and its Cholesky factor (forwardDynamicsCholesky)
  Fixman,    // O(n) Fixman route (forwardDynamicsFixman)
};

template <typename S>
struct ModelTpl;
template <typename S>
struct DataTpl;

using Model = ModelTpl<double>;
using Data = DataTpl<double>;

/// A wrench [moment; force] applied by the environment on the link of kinematic frame `frame` (frameIndex:
/// a link, the tip, the root link), the moment about the point `point` fixed on that link (the frame's
/// coordinates; zero: the frame's origin), both in the frame's axes (Local) or in the base/world axes
/// (Base).
template <typename S>
struct ExternalWrenchTpl {
  int frame = 0;
  Eigen::Matrix<S, 6, 1> wrench = Eigen::Matrix<S, 6, 1>::Zero();
  ReferenceFrame reference = ReferenceFrame::Local;
  Eigen::Matrix<S, 3, 1> point = Eigen::Matrix<S, 3, 1>::Zero();
};
using ExternalWrench = ExternalWrenchTpl<double>;

/// Fixed-size and dynamic Eigen aliases used throughout the core, by scalar type.
template <typename S>
struct Types {
  using Vec3 = Eigen::Matrix<S, 3, 1>;
  using Mat3 = Eigen::Matrix<S, 3, 3>;
  using Vec6 = Eigen::Matrix<S, 6, 1>;
  using Mat6 = Eigen::Matrix<S, 6, 6>;
  using VecX = Eigen::Matrix<S, Eigen::Dynamic, 1>;
  using MatX = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;
  using ConstVecRef = Eigen::Ref<const VecX>;
};

}  // namespace denoc
