// Every option of denocd in one struct, filled from flags and DENOC_* environment variables (a flag wins
// over its variable, a variable over the default) and logged once at start.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace denoc::server {

struct ServerOptions {
  std::string listen = "127.0.0.1:50051";  // --listen / DENOC_LISTEN: host:port; port 0 picks a free port
  std::string port_file;                   // --port-file / DENOC_PORT_FILE: the chosen port is written here
  std::string store_dir = "denoc-store";   // --store-dir / DENOC_STORE_DIR: the model store directory
  std::vector<std::string> preload;  // --preload / DENOC_PRELOAD: URDF files (FILE or FILE@TIP_LINK), pinned
  bool examples = true;              // --examples / DENOC_EXAMPLES: preload the built-in example models
  int threads = 4;                   // --threads / DENOC_THREADS: gRPC's synchronous pool (reflection only)
  unsigned batch_threads = 0;        // --batch-threads / DENOC_BATCH_THREADS: cores a batch uses (0: all)
  // the compute executor (docs/service.md "Thread model"): every call's work runs on it, never on gRPC's
  // threads; --compute-threads / DENOC_COMPUTE_THREADS (0: one per core, at least 2)
  unsigned compute_threads = 0;
  std::uint32_t compute_queue = 64;  // --compute-queue / DENOC_COMPUTE_QUEUE: calls waiting for a thread
  // --heap-keep-mb / DENOC_HEAP_KEEP_MB: freed memory the allocator keeps for reuse per arena, and blocks up
  // to 32 MiB from its heap rather than mmap (0: glibc's defaults); docs/service.md "Thread model"
  unsigned heap_keep_mb = 128;
  std::string api;             // --api / DENOC_API: deprecated, ignored (every RPC is on the callback API)
  std::uint32_t max_dof = 64;  // --max-dof / DENOC_MAX_DOF
  std::uint32_t max_states = 100000;          // --max-states / DENOC_MAX_STATES: states per request
  std::size_t max_message_bytes = 64u << 20;  // --max-message-bytes / DENOC_MAX_MESSAGE_BYTES (in and out)
  std::size_t max_models = 4096;              // --max-models / DENOC_MAX_MODELS: models held in memory (LRU)
  std::size_t workspaces_per_thread = 8;      // --workspaces-per-thread: deprecated, ignored
  int shutdown_grace_ms = 1000;    // --shutdown-grace-ms / DENOC_SHUTDOWN_GRACE_MS: NOT_SERVING first
  int drain_timeout_ms = 10000;    // --drain-timeout-ms / DENOC_DRAIN_TIMEOUT_MS: then drain this long
  std::string log_level = "info";  // --log-level / DENOC_LOG_LEVEL: trace debug info warn error

  // transport security and access control
  std::string tls_cert;       // --tls-cert / DENOC_TLS_CERT: server certificate chain (PEM); with tls_key
  std::string tls_key;        // --tls-key / DENOC_TLS_KEY: server private key (PEM)
  std::string tls_client_ca;  // --tls-client-ca / DENOC_TLS_CLIENT_CA: CA bundle; turns on mutual TLS
  bool plaintext = false;     // --plaintext / DENOC_PLAINTEXT: allow plaintext on a non-loopback address
  std::string token_file;     // --token-file / DENOC_TOKEN_FILE: bearer tokens ("TOKEN" or "NAME TOKEN")
  // --trusted-front-header / DENOC_TRUSTED_FRONT_HEADER: without tokens, the identity headers of the front
  // (x-denoc-client-*, front.hpp) name the caller; only on a unix-socket listener (docs/service.md, "The
  // front")
  bool trusted_front_header = false;

  // resource protection
  std::uint32_t max_streams = 64;  // --max-streams / DENOC_MAX_STREAMS: concurrent Simulate + Stream calls
  std::uint64_t max_inflight_states =
      0;                             // --max-inflight-states / DENOC_MAX_INFLIGHT_STATES (0: 8 x max_states)
  int keepalive_time_ms = 60000;     // --keepalive-time-ms / DENOC_KEEPALIVE_TIME_MS: ping idle links
  int keepalive_timeout_ms = 20000;  // --keepalive-timeout-ms / DENOC_KEEPALIVE_TIMEOUT_MS: then close
  int max_connection_idle_ms = 1800000;  // --max-connection-idle-ms / DENOC_MAX_CONNECTION_IDLE_MS (0: off)
  int max_connection_age_ms = 0;         // --max-connection-age-ms / DENOC_MAX_CONNECTION_AGE_MS (0: off)
  // --grpc-arg / DENOC_GRPC_ARGS: gRPC channel arguments with integer values (NAME=VALUE, "grpc." names),
  // for transport tuning such as HTTP/2 windows and frame sizes (docs/service.md, "Thread model")
  std::vector<std::string> grpc_args;
  // per principal (a token's name; without tokens the peer's address): its share of each bound (0: half
  // of the bound, and for states at least --max-states); docs/service.md "Resource protection"
  std::uint64_t principal_inflight_states =
      0;                                // --principal-inflight-states / DENOC_PRINCIPAL_INFLIGHT_STATES
  std::uint32_t principal_streams = 0;  // --principal-streams / DENOC_PRINCIPAL_STREAMS
  std::uint32_t principal_queue = 0;    // --principal-queue / DENOC_PRINCIPAL_QUEUE
  // streams that pin nothing: a Stream without a message this long is closed, a Simulate or Stream whose
  // client reads nothing this long is cancelled
  int idle_stream_timeout_ms = 30000;  // --idle-stream-timeout-ms / DENOC_IDLE_STREAM_TIMEOUT_MS
  int write_stall_timeout_ms = 10000;  // --write-stall-timeout-ms / DENOC_WRITE_STALL_TIMEOUT_MS
  // transport bounds: HTTP/2 streams per connection (SETTINGS_MAX_CONCURRENT_STREAMS) and the memory gRPC
  // may use for connections and calls (grpc::ResourceQuota; 0: 4 x --max-message-bytes, at least 64 MiB)
  std::uint32_t max_concurrent_streams = 100;  // --max-concurrent-streams / DENOC_MAX_CONCURRENT_STREAMS
  std::uint32_t memory_quota_mb = 0;           // --memory-quota-mb / DENOC_MEMORY_QUOTA_MB

  // operations
  std::string metrics_listen;     // --metrics-listen / DENOC_METRICS_LISTEN: host:port of /metrics (off)
  std::string metrics_port_file;  // --metrics-port-file / DENOC_METRICS_PORT_FILE
  bool metrics_public = false;    // --metrics-public / DENOC_METRICS_PUBLIC: allow /metrics off loopback
  unsigned metrics_threads = 4;   // --metrics-threads / DENOC_METRICS_THREADS: HTTP workers of /metrics
  int metrics_timeout_ms = 5000;  // --metrics-timeout-ms / DENOC_METRICS_TIMEOUT_MS: read/write timeout

  bool tls() const { return !tls_cert.empty(); }
  std::uint64_t inflightStates() const {
    return max_inflight_states ? max_inflight_states : 8ull * max_states;
  }
  std::uint64_t principalInflightStates() const {
    if (principal_inflight_states) return principal_inflight_states;
    return std::min(inflightStates(), std::max<std::uint64_t>(inflightStates() / 2, max_states));
  }
  std::uint32_t principalStreams() const {
    return principal_streams ? principal_streams : std::max<std::uint32_t>(1, max_streams / 2);
  }
  std::uint32_t principalQueue() const {
    return principal_queue ? principal_queue : std::max<std::uint32_t>(1, compute_queue / 2);
  }
  unsigned computeThreads() const;
  std::size_t memoryQuotaBytes() const {
    if (memory_quota_mb) return std::size_t{memory_quota_mb} << 20;
    return std::max<std::size_t>(std::size_t{64} << 20, 4 * max_message_bytes);
  }

  /// One line describing every option (logged at start).
  std::string describe() const;
};

/// Parses argv and the environment. Returns false and sets exit_code when the program should exit (--help,
/// a bad flag, options that do not fit together: see checkOptions).
bool parseOptions(int argc, char** argv, ServerOptions& options, int& exit_code);

/// Empty when the options fit together, else what is wrong: a TLS certificate without its key (or the
/// reverse), a client CA without TLS, plaintext on a non-loopback address without --plaintext, the
/// unauthenticated /metrics on a non-loopback address without --metrics-public, or a trusted front header
/// on a listener that is not a unix socket.
std::string checkOptions(const ServerOptions& options);

/// True for addresses only this host can reach, judged on the parsed address, never on its spelling:
/// HOST:PORT or [HOST]:PORT where HOST is an IPv4 address in 127.0.0.0/8, ::1, an IPv4-mapped ::ffff:127.x
/// address, or `localhost` when every address it resolves to is one of those; unix: and unix-abstract:
/// sockets. Anything else (0.0.0.0, a bare port, another name, a list, "127.0.0.1.example.com") is false.
bool isLoopbackAddress(const std::string& address);

/// Splits a --grpc-arg "grpc.NAME=INTEGER" into its name and value; false if it is not of that form.
bool parseGrpcArg(const std::string& arg, std::string& name, int& value);

}  // namespace denoc::server
