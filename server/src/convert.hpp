// Conversion between the wire messages (denoc.v1) and the core: answer headers, row-major matrices, packed
// arrays sized once, the forward-dynamics routes and the simulation options.
#pragma once

#include <google/protobuf/repeated_field.h>

#include <Eigen/Core>
#include <cstdint>

#include "denoc/data.hpp"
#include "denoc/model.hpp"
#include "denoc/simulate.hpp"
#include "denoc/v1/dynamics.pb.h"
#include "registry.hpp"

namespace denoc::server {

/// The fields every dynamics answer repeats: the model id and the gravity used.
template <typename Response>
void setHeader(Response& resp, const Entry& entry) {
  resp.set_model_id(entry.id);
  *resp.mutable_gravity() = entry.info.gravity();
}

/// The field resized to n values (zeros), its storage returned for the answer to be written in place.
double* resized(google::protobuf::RepeatedField<double>* field, std::uint64_t n);

/// The core's forward-dynamics route of a request's route (the one mapping; the route must be valid:
/// checkRoute; FORWARD_ROUTE_SAHA and the unset value are Saha's O(n) route).
ForwardRoute forwardRoute(v1::ForwardRoute route);

/// qdd by the requested route (SAHA, FIXMAN or CHOLESKY; the route must be valid: checkRoute).
const Eigen::VectorXd& forwardDynamicsBy(v1::ForwardRoute route, const Model& m, Data& d,
                                         const Eigen::Ref<const Eigen::VectorXd>& q,
                                         const Eigen::Ref<const Eigen::VectorXd>& qd,
                                         const Eigen::Ref<const Eigen::VectorXd>& tau);

/// The simulation options of a request for a model of n joints. Refuses (RequestError) what has no core
/// counterpart: an unknown integrator or route, FIXMAN (the simulator has no such route), max_steps above
/// the core's limit, torque and damping arrays of the wrong shape or with non-finite values; the values
/// themselves are the core's to check (validateSimulation).
SimulationOptions toSimulationOptions(const v1::SimulateRequest& req, int n);

}  // namespace denoc::server
