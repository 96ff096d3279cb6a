// Request-size limits of denocd (from ServerOptions); every violation is RESOURCE_EXHAUSTED naming the
// flag and the environment variable that set the limit.
#pragma once

#include <cstddef>
#include <cstdint>

namespace denoc::server {

struct Limits {
  std::uint32_t max_dof = 64;
  std::uint32_t max_states = 100000;
  std::size_t max_message_bytes = 64u << 20;
};

}  // namespace denoc::server
