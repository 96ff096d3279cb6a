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

namespace denoc {

/// Kind of a 1-DOF joint.
enum class JointType : std::uint8_t { Revolute, Prismatic };

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
