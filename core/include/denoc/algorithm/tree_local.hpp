// Inverse and O(n) forward dynamics and the inertia matrix of a tree model on the serial recursions' own
// steps, run over the parent index (docs/algorithms.md, "Trees on the serial steps", eq. TL.1-TL.6).
//
// Every body keeps the serial chain's frame (model.hpp): F_i has z along joint i's axis and F_p's x axis is
// normal to joint p's axis and to its first child's; a further child c turns first by gamma_c about F_p's z,
//   R_c = Rz(gamma_c) Rx(alpha_c) Rz(theta_c)                                       (TreeJointRotation)
// so the forward step of the inverse dynamics reads its parent's motion (w, wd, a, K in F_p) instead of link
// i-1's, and the backward step adds a body's wrench into its parent's:
//   w_p <- w_p + B_{c,p}^T w_c for every child c, tau_i = p_i^T w_i                      (eq. TL.2)
// The root link is body "-1", in its own frame F_{-1} (a fixed root: the turned base frame). A floating
// root's motion is its velocity v_r = [w; v] in its own axes: the acceleration of its origin is vdot + w x v
// less gravity turned into its axes; a planar root's is the world's (x, y) rates turned by Rz(yaw)^T
// (eq. TL.1). Its generalized force is its wrench about its origin, [n; f] (floating) or (Rz(yaw) f)_xy, n_z
// (planar).
//
// Forward dynamics keeps the serial route's common frame, here F_{-1} (for a moving root the root link's
// frame at this instant: the inertia matrix does not depend on the frame it is written in). The reverse
// Gaussian elimination sums each body's articulated inertia and eta into its parent's (eq. TL.3), the moving
// root's nr equations are solved by a Cholesky factor of S_r^T Mh_r S_r (eq. TL.4), and the forward
// substitution reads the parent's mu (eq. TL.5). For a chain these are the serial route's operations.
//
// External wrenches on any frame are subtracted from their bodies' wrenches between the forward and the
// backward sweep, in the body's frame about its origin (eq. TL.7).
#pragma once

#include "denoc/algorithm/inertia_matrix.hpp"
#include "denoc/algorithm/inverse_dynamics.hpp"
#include "denoc/algorithm/tree.hpp"
#include "denoc/algorithm/udu.hpp"

// the declarations are in tree.hpp, which the tree functions' dispatch reads
#include "denoc/algorithm/tree_local.hxx"
