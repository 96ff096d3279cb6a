// Request-size limits of denocd and the time limits of its streams (from ServerOptions); every violation
// is answered with a status naming the flag and the environment variable that set the limit.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace denoc::server {

/// Most external wrenches (LinkWrench) of one request (the core's kMaxBatchWrenches).
inline constexpr std::uint32_t kMaxWrenches = 64;
/// Most frames one Kinematics request names (links).
inline constexpr std::uint32_t kMaxFrames = 64;

struct Limits {
  std::uint32_t max_dof = 64;    // velocity coordinates nv of a model (its joints, for a fixed root)
  std::uint32_t max_depth = 64;  // joints on a path from a model's root link
  std::uint32_t max_states = 100000;
  std::size_t max_message_bytes = 64u << 20;
};

/// How long a streaming call may wait on its client before the server ends it.
struct StreamTimeouts {
  std::chrono::milliseconds idle{30000};  // a Stream without a message (--idle-stream-timeout-ms)
  std::chrono::milliseconds write_stall{
      10000};  // a write the client does not take (--write-stall-timeout-ms)
};

}  // namespace denoc::server
