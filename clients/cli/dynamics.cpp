// The dynamics of one state in-process, as Results for the output.
#include "dynamics.hpp"

#include "denoc/algorithm/fixman.hpp"
#include "denoc/algorithm/forward_dynamics.hpp"
#include "denoc/algorithm/inverse_dynamics.hpp"
#include "denoc/algorithm/udu.hpp"
#include "denoc/model_io.hpp"

namespace denoc::cli {

Model loadModel(const std::string& path, const UrdfOptions& urdf_options) {
  return loadModelFile(path, urdf_options);
}

Result computeInverseDynamics(const Model& model, Data& data, const State& state) {
  return inverseDynamicsResult(state, inverseDynamics(model, data, state.q, state.qd, state.qdd));
}

Result computeForwardDynamics(const Model& model, Data& data, const State& state, const std::string& route) {
  const Eigen::VectorXd qdd =
      route == "cholesky" ? forwardDynamicsCholesky(model, data, state.q, state.qd, state.tau)
      : route == "fixman" ? forwardDynamicsFixman(model, data, state.q, state.qd, state.tau)
                          : forwardDynamics(model, data, state.q, state.qd, state.tau);
  return forwardDynamicsResult(state, qdd);
}

Result computeFactor(const Model& model, Data& data, const State& state, bool inverse) {
  computeFullFactor(model, data, state.q);
  const ModelView v = view(model);
  Result r = factorResult(v, state.q, data.D, data.M, data.U, data.log_det);
  if (inverse) addInverse(r, v, computeInverseInertia(model, data, state.q));
  return r;
}

}  // namespace denoc::cli
