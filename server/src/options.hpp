// Every option of denocd in one struct, filled from flags and DENOC_* environment variables (a flag wins
// over its variable, a variable over the default) and logged once at start.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace denoc::server {

struct ServerOptions {
  std::string listen = "127.0.0.1:50051";  // --listen / DENOC_LISTEN: host:port; port 0 picks a free port
  std::string port_file;                   // --port-file / DENOC_PORT_FILE: the chosen port is written here
  std::string store_dir = "denoc-store";   // --store-dir / DENOC_STORE_DIR: the model store directory
  std::vector<std::string> preload;   // --preload / DENOC_PRELOAD: URDF files (FILE or FILE@TIP_LINK), pinned
  bool examples = true;               // --examples / DENOC_EXAMPLES: preload the built-in example models
  int threads = 32;                   // --threads / DENOC_THREADS: max threads of the sync server's pool
  std::uint32_t max_dof = 64;         // --max-dof / DENOC_MAX_DOF
  std::uint32_t max_states = 100000;  // --max-states / DENOC_MAX_STATES: states per request
  std::size_t max_message_bytes = 64u << 20;  // --max-message-bytes / DENOC_MAX_MESSAGE_BYTES (in and out)
  std::size_t max_models = 4096;              // --max-models / DENOC_MAX_MODELS: models held in memory (LRU)
  std::size_t workspaces_per_thread = 8;      // --workspaces-per-thread / DENOC_WORKSPACES_PER_THREAD
  int shutdown_grace_ms = 1000;    // --shutdown-grace-ms / DENOC_SHUTDOWN_GRACE_MS: NOT_SERVING first
  int drain_timeout_ms = 10000;    // --drain-timeout-ms / DENOC_DRAIN_TIMEOUT_MS: then drain this long
  std::string log_level = "info";  // --log-level / DENOC_LOG_LEVEL: trace debug info warn error

  /// One line describing every option (logged at start).
  std::string describe() const;
};

/// Parses argv and the environment. Returns false and sets exit_code when the program should exit (--help,
/// a bad flag).
bool parseOptions(int argc, char** argv, ServerOptions& options, int& exit_code);

}  // namespace denoc::server
