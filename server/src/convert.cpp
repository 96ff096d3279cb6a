#include "convert.hpp"

#include <string>
#include <vector>

#include "denoc/algorithm/fixman.hpp"
#include "denoc/algorithm/forward_dynamics.hpp"
#include "errors.hpp"
#include "validate.hpp"

namespace denoc::server {

using VecX = Eigen::VectorXd;

double* resized(google::protobuf::RepeatedField<double>* field, std::uint64_t n) {
  field->Resize(static_cast<int>(n), 0.0);
  return field->mutable_data();
}

ForwardRoute forwardRoute(v1::ForwardRoute route) {
  switch (route) {
    case v1::FORWARD_ROUTE_CHOLESKY:
      return ForwardRoute::Cholesky;
    case v1::FORWARD_ROUTE_FIXMAN:
      return ForwardRoute::Fixman;
    default:
      return ForwardRoute::Saha;
  }
}

const VecX& forwardDynamicsBy(v1::ForwardRoute route, const Model& m, Data& d,
                              const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& qd,
                              const Eigen::Ref<const VecX>& tau) {
  switch (forwardRoute(route)) {
    case ForwardRoute::Cholesky:
      return forwardDynamicsCholesky(m, d, q, qd, tau);
    case ForwardRoute::Fixman:
      return forwardDynamicsFixman(m, d, q, qd, tau);
    case ForwardRoute::Saha:
      break;
  }
  return forwardDynamics(m, d, q, qd, tau);
}

SimulationOptions toSimulationOptions(const v1::SimulateRequest& req, int n) {
  SimulationOptions o;
  switch (req.integrator()) {
    case v1::INTEGRATOR_DOPRI5:
      o.integrator = Integrator::DormandPrince45;
      break;
    case v1::INTEGRATOR_RK4:
      o.integrator = Integrator::RK4;
      break;
    default:
      fail(ErrorCode::InvalidArgument, "integrator is " + std::to_string(static_cast<int>(req.integrator())) +
                                           ", expected INTEGRATOR_DOPRI5 or INTEGRATOR_RK4");
  }
  switch (req.route()) {
    case v1::FORWARD_ROUTE_SAHA:
      o.route = ForwardDynamicsRoute::Saha;
      break;
    case v1::FORWARD_ROUTE_CHOLESKY:
      o.route = ForwardDynamicsRoute::Cholesky;
      break;
    default:
      fail(ErrorCode::InvalidArgument,
           "route is " + std::to_string(static_cast<int>(req.route())) +
               ", expected FORWARD_ROUTE_SAHA or FORWARD_ROUTE_CHOLESKY for Simulate");
  }
  o.t_end = req.t_end();
  if (req.dt_out() != 0.0) o.dt_out = req.dt_out();
  o.sample_times.assign(req.sample_times().begin(), req.sample_times().end());
  if (req.step() != 0.0) o.step = req.step();
  if (req.rtol() != 0.0) o.rtol = req.rtol();
  if (req.atol() != 0.0) o.atol = req.atol();
  o.initial_step = req.initial_step();
  if (req.max_step() != 0.0) o.max_step = req.max_step();
  if (req.max_steps() != 0) {
    if (req.max_steps() > static_cast<std::uint64_t>(o.max_steps)) {
      fail(ErrorCode::ResourceExhausted, "max_steps is " + std::to_string(req.max_steps()) +
                                             ", more than the server's limit of " +
                                             std::to_string(o.max_steps));
    }
    o.max_steps = static_cast<std::int64_t>(req.max_steps());
  }
  checkFinite(req.torque_times(), "torque_times", 0);
  checkFinite(req.torque_values(), "torque_values", static_cast<std::uint64_t>(n));
  if (req.torque_times_size() == 0 && req.torque_values_size() != 0) {
    checkLength(req.torque_values(), "torque_values", static_cast<std::uint64_t>(n),
                "dof (a constant torque; give torque_times for a schedule)");
    o.torque = TorqueInput::constant(Eigen::Map<const VecX>(req.torque_values().data(), n));
  } else if (req.torque_times_size() != 0) {
    checkLength(req.torque_values(), "torque_values",
                checkedProduct(static_cast<std::uint64_t>(req.torque_times_size()),
                               static_cast<std::uint64_t>(n), "torque_times*dof"),
                "torque_times*dof");
    std::vector<double> times(req.torque_times().begin(), req.torque_times().end());
    std::vector<VecX> values;
    for (int k = 0; k < req.torque_times_size(); ++k) {
      values.emplace_back(
          Eigen::Map<const VecX>(req.torque_values().data() + static_cast<std::size_t>(k) * n, n));
    }
    o.torque = TorqueInput::piecewiseLinear(std::move(times), std::move(values));
  }
  if (req.damping_size() != 0) {
    checkLength(req.damping(), "damping", static_cast<std::uint64_t>(n), "dof (or 0 for none)");
    checkFinite(req.damping(), "damping", 0);
    o.damping = Eigen::Map<const VecX>(req.damping().data(), n);
  }
  return o;
}

}  // namespace denoc::server
