// Every option of denocd in one struct, nested by concern (where it listens, its security, its models, the
// request limits, the compute threads, admission, streams, the transport, shutdown, metrics), filled from
// flags and DENOC_* environment variables (a flag wins over its variable, a variable over the default) and
// logged once at start. docs/service.md, "Options", lists them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "limits.hpp"
#include "metrics_http.hpp"

namespace denoc::server {

/// Where denocd listens.
struct ListenOptions {
  std::string address =
      "127.0.0.1:50051";  // --listen / DENOC_LISTEN: host:port (port 0: a free port) or unix:PATH
  std::string port_file;  // --port-file / DENOC_PORT_FILE: the chosen port is written here
  bool without_front =
      false;  // --without-front / DENOC_WITHOUT_FRONT: serve a reachable TCP address directly
};

/// Transport security and access control (docs/service.md, "Transport security", "Access control").
struct SecurityOptions {
  std::string tls_cert;       // --tls-cert / DENOC_TLS_CERT: server certificate chain (PEM); with tls_key
  std::string tls_key;        // --tls-key / DENOC_TLS_KEY: server private key (PEM)
  std::string tls_client_ca;  // --tls-client-ca / DENOC_TLS_CLIENT_CA: CA bundle; turns on mutual TLS
  // --tls-reload-s / DENOC_TLS_RELOAD_S: the three files above are read again this often, and a changed pair
  // or CA serves the connections made after it (a rotated certificate); 0: read once at start
  unsigned tls_reload_s = 60;
  bool plaintext = false;  // --plaintext / DENOC_PLAINTEXT: allow plaintext on a non-loopback address
  std::string token_file;  // --token-file / DENOC_TOKEN_FILE: bearer tokens ("TOKEN" or "NAME TOKEN")
  // --trusted-front-header / DENOC_TRUSTED_FRONT_HEADER: without tokens, the identity headers of the front
  // (x-denoc-client-*, front.hpp) name the caller; only on a unix-socket listener ("The front")
  bool trusted_front_header = false;

  bool tls() const { return !tls_cert.empty(); }
};

/// The models: the store, what is registered at start, how many are held in memory, how many one principal
/// may store.
struct ModelOptions {
  std::string store_dir = "denoc-store";  // --store-dir / DENOC_STORE_DIR: the model store directory
  std::vector<std::string> preload;  // --preload / DENOC_PRELOAD: URDF files (FILE or FILE@TIP_LINK), pinned
  bool examples = true;              // --examples / DENOC_EXAMPLES: preload the built-in example models
  std::size_t max_models = 4096;     // --max-models / DENOC_MAX_MODELS: models held in memory (LRU)
  // --max-models-per-principal / DENOC_MAX_MODELS_PER_PRINCIPAL: records one principal may own in the store,
  // counted over every replica sharing it (0: no bound; callers without a token are one principal)
  std::size_t max_models_per_principal = 0;
};

/// The threads that compute and the memory they keep (docs/service.md, "Thread model").
struct ComputeOptions {
  unsigned threads =
      0;  // --compute-threads / DENOC_COMPUTE_THREADS: every call's work (0: one per core, >= 2)
  std::uint32_t queue = 64;  // --compute-queue / DENOC_COMPUTE_QUEUE: unary calls waiting for a thread
  std::uint32_t principal_queue = 0;  // --principal-queue / DENOC_PRINCIPAL_QUEUE (0: half of queue, >= 1)
  unsigned batch_threads =
      0;  // --batch-threads / DENOC_BATCH_THREADS: threads a batch is split over (0: all)
  // --heap-keep-mb / DENOC_HEAP_KEEP_MB: freed memory the allocator keeps for reuse per arena, and blocks up
  // to 32 MiB from its heap rather than mmap (0: glibc's defaults)
  unsigned heap_keep_mb = 128;
};

/// What may run at once, for the server and per principal (docs/service.md, "Resource protection").
struct AdmissionOptions {
  std::uint32_t max_streams = 64;               // --max-streams / DENOC_MAX_STREAMS: Simulate + Stream calls
  std::uint64_t max_inflight_states = 0;        // --max-inflight-states (0: 8 x --max-states)
  std::uint64_t principal_inflight_states = 0;  // --principal-inflight-states (0: half, >= --max-states)
  std::uint32_t principal_streams = 0;          // --principal-streams (0: half of max_streams, >= 1)
};

/// How long a stream may wait on its client: a Stream without a message this long is closed, a Simulate or
/// Stream whose client reads nothing this long is cancelled.
struct StreamOptions {
  int idle_timeout_ms = 30000;         // --idle-stream-timeout-ms / DENOC_IDLE_STREAM_TIMEOUT_MS
  int write_stall_timeout_ms = 10000;  // --write-stall-timeout-ms / DENOC_WRITE_STALL_TIMEOUT_MS
};

/// Connections and HTTP/2 (transport.hpp): keepalive, idle and age limits, streams per connection, gRPC's
/// memory quota, raw channel arguments.
struct TransportOptions {
  int keepalive_time_ms = 60000;         // --keepalive-time-ms / DENOC_KEEPALIVE_TIME_MS: ping idle links
  int keepalive_timeout_ms = 20000;      // --keepalive-timeout-ms / DENOC_KEEPALIVE_TIMEOUT_MS: then close
  int max_connection_idle_ms = 1800000;  // --max-connection-idle-ms / DENOC_MAX_CONNECTION_IDLE_MS (0: off)
  int max_connection_age_ms = 0;         // --max-connection-age-ms / DENOC_MAX_CONNECTION_AGE_MS (0: off)
  std::uint32_t max_concurrent_streams = 100;  // --max-concurrent-streams: SETTINGS_MAX_CONCURRENT_STREAMS
  std::uint32_t memory_quota_mb = 0;  // --memory-quota-mb / DENOC_MEMORY_QUOTA_MB (0: 4 messages, >= 64 MiB)
  // --grpc-arg / DENOC_GRPC_ARGS: gRPC channel arguments with integer values (NAME=VALUE, "grpc." names)
  std::vector<std::string> grpc_args;
};

/// SIGTERM and SIGINT: NOT_SERVING first, then drain.
struct ShutdownOptions {
  int grace_ms = 1000;           // --shutdown-grace-ms / DENOC_SHUTDOWN_GRACE_MS: NOT_SERVING this long first
  int drain_timeout_ms = 10000;  // --drain-timeout-ms / DENOC_DRAIN_TIMEOUT_MS: then drain this long
};

/// The Prometheus endpoint (metrics.hpp).
struct MetricsOptions {
  std::string listen;         // --metrics-listen / DENOC_METRICS_LISTEN: host:port of /metrics (off)
  std::string port_file;      // --metrics-port-file / DENOC_METRICS_PORT_FILE
  bool allow_public = false;  // --metrics-public / DENOC_METRICS_PUBLIC: allow /metrics off loopback
  // --metrics-threads, --metrics-timeout-ms, --metrics-max-connections, --metrics-max-per-peer
  // (DENOC_METRICS_THREADS, ...): the HTTP server's threads, idle timeout and connection bounds
  MetricsHttp http;
};

struct ServerOptions {
  ListenOptions listen;
  SecurityOptions security;
  ModelOptions models;
  Limits limits;  // --max-dof, --max-states, --max-message-bytes (DENOC_MAX_DOF, ...): limits.hpp
  ComputeOptions compute;
  AdmissionOptions admission;
  StreamOptions streams;
  TransportOptions transport;
  ShutdownOptions shutdown;
  MetricsOptions metrics;
  std::string log_level = "info";  // --log-level / DENOC_LOG_LEVEL: trace debug info warn error

  // the defaults that follow from other options
  std::uint64_t inflightStates() const {
    return admission.max_inflight_states ? admission.max_inflight_states : 8ull * limits.max_states;
  }
  std::uint64_t principalInflightStates() const {
    if (admission.principal_inflight_states) return admission.principal_inflight_states;
    return std::min(inflightStates(), std::max<std::uint64_t>(inflightStates() / 2, limits.max_states));
  }
  std::uint32_t principalStreams() const {
    return admission.principal_streams ? admission.principal_streams
                                       : std::max<std::uint32_t>(1, admission.max_streams / 2);
  }
  std::uint32_t principalQueue() const {
    return compute.principal_queue ? compute.principal_queue : std::max<std::uint32_t>(1, compute.queue / 2);
  }
  unsigned computeThreads() const;
  std::size_t memoryQuotaBytes() const {
    if (transport.memory_quota_mb) return std::size_t{transport.memory_quota_mb} << 20;
    return std::max<std::size_t>(std::size_t{64} << 20, 4 * limits.max_message_bytes);
  }

  /// One line describing every option (logged at start).
  std::string describe() const;
};

/// Parses argv and the environment. Returns false and sets exit_code when the program should exit (--help,
/// --version, --check-config, a bad or unknown flag, options that do not fit together: see checkOptions).
bool parseOptions(int argc, char** argv, ServerOptions& options, int& exit_code);

/// Empty when the options fit together, else what is wrong: a TLS certificate without its key (or the
/// reverse), a client CA without TLS, plaintext on a non-loopback address without --plaintext, the
/// unauthenticated /metrics on a non-loopback address without --metrics-public, a trusted front header
/// on a listener that is not a unix socket, shares above their bounds, a memory quota below two messages.
std::string checkOptions(const ServerOptions& options);

/// True for addresses only this host can reach, judged on the parsed address, never on its spelling:
/// HOST:PORT or [HOST]:PORT where HOST is an IPv4 address in 127.0.0.0/8, ::1, an IPv4-mapped ::ffff:127.x
/// address, or `localhost` when every address it resolves to is one of those; unix: and unix-abstract:
/// sockets. Anything else (0.0.0.0, a bare port, another name, a list, "127.0.0.1.example.com") is false.
bool isLoopbackAddress(const std::string& address);

/// Splits a --grpc-arg "grpc.NAME=INTEGER" into its name and value; false if it is not of that form.
bool parseGrpcArg(const std::string& arg, std::string& name, int& value);

}  // namespace denoc::server
