// The configuration manifold of a model (docs/trees.md): q has nq entries, a velocity v has nv. For a fixed
// root nq = nv and q is a vector; a floating root's q[0..7) is [x y z | qx qy qz qw] (a point and a unit
// quaternion, vector part first) with v[0..6) = [w; v] in the root link's axes; a planar root's q[0..3) =
// v[0..3) = [x y yaw].
//
// integrate moves along v for dt: the root link turns by exp(w dt) about its own axes and its origin moves by
// R v dt (R its orientation at the start), every other coordinate by v dt. difference is its inverse:
// difference(q0, integrate(q0, v, 1)) = v while |w| < pi. Both are the maps the planners' and the rollouts'
// tangent-space linearizations are taken along.
#pragma once

#include <random>

#include "denoc/model.hpp"

namespace denoc {

/// The neutral configuration: every joint at 0 (clamped into its limits), the root at the world's origin
/// with the identity orientation (quaternion (0, 0, 0, 1)).
Eigen::VectorXd neutralConfiguration(const Model& model);

/// q (+) v dt on the manifold (see the file comment). q: nq entries, its quaternion within
/// kQuaternionTolerance of unit norm; v: nv. The result's quaternion has unit norm. Throws
/// std::invalid_argument on a wrong size, a non-finite entry or a quaternion beyond the tolerance.
Eigen::VectorXd integrateConfiguration(const Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                       double dt = 1.0);

/// The velocity v (nv entries) with integrateConfiguration(q0, v, 1) = q1, the rotation part the shortest
/// (|w| <= pi). Same checks as integrateConfiguration on q0 and q1.
Eigen::VectorXd differenceConfiguration(const Model& model, const Eigen::VectorXd& q0,
                                        const Eigen::VectorXd& q1);

/// q with its quaternion divided by its norm. Throws std::invalid_argument when the norm is not within
/// kQuaternionTolerance of 1 (the message names the norm) or q has a wrong size or a non-finite entry.
Eigen::VectorXd normalizeConfiguration(const Model& model, const Eigen::VectorXd& q);

/// A configuration drawn uniformly: each joint within its limits (a joint without finite limits in
/// [-pi, pi] for a revolute joint, [-1, 1] m for a prismatic one), a floating or planar root's position in
/// [-1, 1] m per axis, its orientation uniform over the rotations (floating) or its yaw in [-pi, pi].
Eigen::VectorXd randomConfiguration(const Model& model, std::mt19937_64& rng);

/// Checks a configuration (nq entries, |q_i| <= kMaxPosition, the quaternion within kQuaternionTolerance of
/// unit norm): std::invalid_argument naming `function`, `name`, and the norm when it is the fault.
void checkConfiguration(const Model& model, const Eigen::Ref<const Eigen::VectorXd>& q, const char* function,
                        const char* name = "q");

}  // namespace denoc
