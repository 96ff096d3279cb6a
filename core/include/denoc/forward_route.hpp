// Forward dynamics by route: the one dispatch from a ForwardRoute (fwd.hpp) to the route's function, for
// every caller that lets its user choose the route (batches, simulation, the service, the command line).
#pragma once

#include <Eigen/Core>

#include "denoc/data.hpp"

namespace denoc {

/// Throws std::invalid_argument naming `function` unless route is Saha, Cholesky or Fixman.
void checkRoute(ForwardRoute route, const char* function);

/// qdd = I(q)^-1 (tau - C(q, qd) qd - g(q)) by `route`: Saha (forwardDynamics, O(n)), Cholesky
/// (forwardDynamicsCholesky, O(n^3)) or Fixman (forwardDynamicsFixman, O(n)). q, qd, tau: n entries each.
/// Result in data.qdd (returned); the route writes what its own function writes (data.hpp). Throws as the
/// route's function does, and std::invalid_argument for a route that is none of the three.
const Eigen::VectorXd& forwardDynamics(const Model& model, Data& data, ForwardRoute route,
                                       const Eigen::Ref<const Eigen::VectorXd>& q,
                                       const Eigen::Ref<const Eigen::VectorXd>& qd,
                                       const Eigen::Ref<const Eigen::VectorXd>& tau);

}  // namespace denoc
