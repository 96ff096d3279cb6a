// The request fuzz target's input format, shared by the target (fuzz_request.cpp) and the seed generator
// (request_seeds.cpp).
//
// An input is one selector byte followed by a serialized protobuf message. The selector's low 3 bits pick
// the RPC (and so the message type); bits 3-4 pick the model the request is aimed at: one of the models the
// target registers at start (its id replaces the request's model_id), or kAsSent to keep model_id as it
// came (unknown, malformed and empty ids).
#pragma once

#include <cstdint>
#include <string>

#include "denoc/dh.hpp"

namespace denoc::fuzz {

enum class Rpc : std::uint8_t {
  RegisterModel = 0,    // RegisterModelRequest
  InverseDynamics = 1,  // InverseDynamicsRequest
  ForwardDynamics = 2,  // ForwardDynamicsRequest
  FullFactor = 3,       // FullFactorRequest
  Simulate = 4,         // SimulateRequest
  Stream = 5,           // one StreamRequest on a Stream call
  GetModel = 6,         // GetModelRequest
  DeleteModel = 7,      // DeleteModelRequest
};

/// The models registered (pinned) at start, by selector value; kAsSent keeps the request's model_id.
enum class Target : std::uint8_t { Stanford = 0, Planar = 1, PandaUrdf = 2, AsSent = 3 };

inline std::uint8_t selector(Rpc rpc, Target target) {
  return static_cast<std::uint8_t>(static_cast<unsigned>(rpc) | (static_cast<unsigned>(target) << 3));
}
inline Rpc rpcOf(std::uint8_t selector) { return static_cast<Rpc>(selector & 7u); }
inline Target targetOf(std::uint8_t selector) { return static_cast<Target>((selector >> 3) & 3u); }

/// Degrees of freedom of the registered models (Stanford arm, planar arm, Panda from its URDF).
inline int dofOf(Target t) {
  switch (t) {
    case Target::Stanford:
      return static_cast<int>(stanfordArmDH().links.size());
    case Target::Planar:
      return static_cast<int>(planarArmDH().links.size());
    case Target::PandaUrdf:
      return 7;
    default:
      return 0;
  }
}

/// The Panda URDF of the examples (registered as a URDF model by the target).
inline std::string pandaUrdfPath() { return std::string(DENOC_SOURCE_DIR) + "/examples/models/panda.urdf"; }

}  // namespace denoc::fuzz
