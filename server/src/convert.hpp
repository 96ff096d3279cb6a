// Conversion between the wire messages (denoc.v1) and the core, for requests their validator has checked
// (validate.hpp): nothing here checks. Answer headers, packed arrays sized once, the forward-dynamics
// routes, DH tables, URDF options, payloads and the simulation options.
#pragma once

#include <google/protobuf/repeated_field.h>

#include <Eigen/Core>
#include <cstdint>

#include "denoc/dh.hpp"
#include "denoc/payload.hpp"
#include "denoc/simulate.hpp"
#include "denoc/urdf.hpp"
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

/// A vector of the wire.
Eigen::Vector3d toVec3(const v1::Vec3& v);

/// The core's forward-dynamics route of a request's route (FORWARD_ROUTE_SAHA and the unset value are
/// Saha's O(n) route).
ForwardRoute toForwardRoute(v1::ForwardRoute route);

/// The DH table of a registration with a `dh` source: its links, gravity (default (0, 0, -9.81)) and name
/// (default "dh_model").
DHSpec toDHSpec(const v1::RegisterModelRequest& request);

/// The URDF options of a registration with a `urdf` source: base and tip link, gravity, armature.
UrdfOptions toUrdfOptions(const v1::RegisterModelRequest& request);

/// A payload of the wire (its inertia about its centre of mass, symmetric).
Payload toPayload(const v1::Payload& payload);

/// The simulation options of a Simulate request for a model of n joints (unset values: the core's
/// defaults).
SimulationOptions toSimulationOptions(const v1::SimulateRequest& req, int n);

}  // namespace denoc::server
