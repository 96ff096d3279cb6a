#include "denoc/forward_route.hpp"

#include <stdexcept>
#include <string>

#include "denoc/algorithm/fixman.hpp"
#include "denoc/algorithm/forward_dynamics.hpp"

namespace denoc {

void checkRoute(ForwardRoute route, const char* function) {
  if (route != ForwardRoute::Saha && route != ForwardRoute::Cholesky && route != ForwardRoute::Fixman) {
    throw std::invalid_argument(std::string(function) + ": route is " +
                                std::to_string(static_cast<int>(route)) +
                                ", expected ForwardRoute::Saha, Cholesky or Fixman");
  }
}

const Eigen::VectorXd& forwardDynamics(const Model& model, Data& data, ForwardRoute route,
                                       const Eigen::Ref<const Eigen::VectorXd>& q,
                                       const Eigen::Ref<const Eigen::VectorXd>& qd,
                                       const Eigen::Ref<const Eigen::VectorXd>& tau) {
  switch (route) {
    case ForwardRoute::Saha:
      return forwardDynamics(model, data, q, qd, tau);
    case ForwardRoute::Cholesky:
      return forwardDynamicsCholesky(model, data, q, qd, tau);
    case ForwardRoute::Fixman:
      return forwardDynamicsFixman(model, data, q, qd, tau);
  }
  checkRoute(route, "forwardDynamics");  // throws
  return data.qdd;
}

}  // namespace denoc
