// The dynamics of one state in-process, as Results for the output.
#include "dynamics.hpp"

#include "denoc/algorithm/forward_dynamics.hpp"
#include "denoc/algorithm/inverse_dynamics.hpp"
#include "denoc/algorithm/tree.hpp"
#include "denoc/algorithm/udu.hpp"
#include "denoc/forward_route.hpp"
#include "denoc/model_io.hpp"

namespace denoc::cli {

Model loadModel(const std::string& path, const UrdfOptions& urdf_options) {
  return loadModelFile(path, urdf_options);
}

Result computeInverseDynamics(const Model& model, Data& data, const State& state,
                              const std::vector<ExternalWrench>& wrenches) {
  if (wrenches.empty()) {
    return inverseDynamicsResult(state, inverseDynamics(model, data, state.q, state.qd, state.qdd));
  }
  return inverseDynamicsResult(state, inverseDynamics(model, data, state.q, state.qd, state.qdd, wrenches));
}

ForwardRoute forwardRouteOf(const std::string& name) {
  return name == "cholesky" ? ForwardRoute::Cholesky
         : name == "fixman" ? ForwardRoute::Fixman
                            : ForwardRoute::Saha;
}

Result computeForwardDynamics(const Model& model, Data& data, const State& state, const std::string& route,
                              const std::vector<ExternalWrench>& wrenches) {
  if (wrenches.empty()) {
    return forwardDynamicsResult(
        state, forwardDynamics(model, data, forwardRouteOf(route), state.q, state.qd, state.tau));
  }
  if (forwardRouteOf(route) == ForwardRoute::Saha) {
    return forwardDynamicsResult(state, forwardDynamics(model, data, state.q, state.qd, state.tau, wrenches));
  }
  // the wrenches' joint forces sum J_k^T f_k: inverse dynamics without them less with them
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(model.nv);
  const Eigen::VectorXd without = inverseDynamics(model, data, state.q, state.qd, zero);
  const Eigen::VectorXd with = inverseDynamics(model, data, state.q, state.qd, zero, wrenches);
  const Eigen::VectorXd tau = state.tau + (without - with);
  return forwardDynamicsResult(state,
                               forwardDynamics(model, data, forwardRouteOf(route), state.q, state.qd, tau));
}

Result computeFactor(const Model& model, Data& data, const State& state, bool inverse) {
  computeFullFactor(model, data, state.q);
  const ModelView v = view(model);
  Result r = factorResult(v, state.q, data.D, data.M, data.U, data.log_det);
  if (inverse) addInverse(r, v, computeInverseInertia(model, data, state.q));
  return r;
}

}  // namespace denoc::cli
