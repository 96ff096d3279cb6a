#include "options.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "denoc/batch.hpp"
#include "denoc/version.hpp"

namespace denoc::server {

std::string ServerOptions::describe() const {
  const SecurityOptions& sec = security;
  std::ostringstream os;
  os << "listen=" << listen.address << " port_file=" << (listen.port_file.empty() ? "-" : listen.port_file)
     << " tls=" << (sec.tls() ? (sec.tls_client_ca.empty() ? "on" : "mutual") : "off")
     << " plaintext=" << (sec.plaintext ? "allowed" : "loopback-only")
     << " without_front=" << (listen.without_front ? "on" : "off")
     << " token_file=" << (sec.token_file.empty() ? "-" : sec.token_file)
     << " trusted_front_header=" << (sec.trusted_front_header ? "on" : "off")
     << " store_dir=" << models.store_dir << " examples=" << (models.examples ? "on" : "off") << " preload=[";
  for (std::size_t i = 0; i < models.preload.size(); ++i) os << (i ? "," : "") << models.preload[i];
  os << "] max_models=" << models.max_models
     << " max_models_per_principal=" << models.max_models_per_principal << " max_dof=" << limits.max_dof
     << " max_depth=" << limits.max_depth << " max_states=" << limits.max_states
     << " max_message_bytes=" << limits.max_message_bytes << " compute_threads=" << computeThreads()
     << " compute_queue=" << compute.queue << " principal_queue=" << principalQueue()
     << " batch_threads=" << compute.batch_threads << " heap_keep_mb=" << compute.heap_keep_mb
     << " max_streams=" << admission.max_streams << " max_inflight_states=" << inflightStates()
     << " principal_inflight_states=" << principalInflightStates()
     << " principal_streams=" << principalStreams() << " idle_stream_timeout_ms=" << streams.idle_timeout_ms
     << " write_stall_timeout_ms=" << streams.write_stall_timeout_ms
     << " keepalive_time_ms=" << transport.keepalive_time_ms
     << " keepalive_timeout_ms=" << transport.keepalive_timeout_ms
     << " max_connection_idle_ms=" << transport.max_connection_idle_ms
     << " max_connection_age_ms=" << transport.max_connection_age_ms
     << " max_concurrent_streams=" << transport.max_concurrent_streams
     << " memory_quota_mb=" << (memoryQuotaBytes() >> 20) << " grpc_args=[";
  for (std::size_t i = 0; i < transport.grpc_args.size(); ++i) os << (i ? "," : "") << transport.grpc_args[i];
  os << "] shutdown_grace_ms=" << shutdown.grace_ms << " drain_timeout_ms=" << shutdown.drain_timeout_ms
     << " metrics_listen=" << (metrics.listen.empty() ? "-" : metrics.listen)
     << " metrics_public=" << (metrics.allow_public ? "allowed" : "loopback-only")
     << " metrics_threads=" << metrics.http.threads << " metrics_timeout_ms=" << metrics.http.timeout_ms
     << " metrics_max_connections=" << metrics.http.max_connections
     << " metrics_max_per_peer=" << metrics.http.max_per_peer << " log_level=" << log_level;
  return os.str();
}

bool parseOptions(int argc, char** argv, ServerOptions& o, int& exit_code) {
  CLI::App app{"denocd: the denoc rigid-body dynamics gRPC service"};
  app.set_version_flag("--version", "denocd " DENOC_VERSION_STRING, "print the version and exit");
  app.option_defaults()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)  // a repeated flag: the last wins
      ->always_capture_default();                              // --help shows every default
  // where it listens, and its security
  app.add_option("--listen", o.listen.address, "host:port to listen on (port 0: a free port), or unix:PATH")
      ->envname("DENOC_LISTEN");
  app.add_option("--port-file", o.listen.port_file, "write the port listened on to this file")
      ->envname("DENOC_PORT_FILE");
  SecurityOptions& sec = o.security;
  app.add_option("--tls-cert", sec.tls_cert, "server certificate chain (PEM file); needs --tls-key")
      ->envname("DENOC_TLS_CERT");
  app.add_option("--tls-key", sec.tls_key, "server private key (PEM file)")->envname("DENOC_TLS_KEY");
  app.add_option("--tls-client-ca", sec.tls_client_ca,
                 "CA certificates (PEM file) that client certificates must chain to: mutual TLS")
      ->envname("DENOC_TLS_CLIENT_CA");
  app.add_option("--tls-reload-s", sec.tls_reload_s,
                 "seconds between reads of the certificate, key and client CA files: a rotated certificate "
                 "serves the connections made after it (0: read once at start)")
      ->envname("DENOC_TLS_RELOAD_S")
      ->check(CLI::Range(0u, 86400u));
  app.add_flag("--plaintext", sec.plaintext, "allow plaintext (no TLS) on a non-loopback address")
      ->envname("DENOC_PLAINTEXT");
  app.add_flag("--without-front", o.listen.without_front,
               "serve a TCP address other hosts can reach directly, without the front (deploy/nginx); this "
               "gRPC lacks the fix of CVE-2023-33953 (an endless HTTP/2 header block is buffered)")
      ->envname("DENOC_WITHOUT_FRONT");
  app.add_option("--token-file", sec.token_file, "bearer tokens, one per line: TOKEN or NAME TOKEN")
      ->envname("DENOC_TOKEN_FILE");
  app.add_flag("--trusted-front-header", sec.trusted_front_header,
               "trust the identity headers (x-denoc-client-verify, -subject, -addr) set by the front that "
               "alone reaches the unix socket listened on: they name the caller when it has no token")
      ->envname("DENOC_TRUSTED_FRONT_HEADER");
  // the models and the request limits
  app.add_option("--store-dir", o.models.store_dir, "model store directory (created if missing)")
      ->envname("DENOC_STORE_DIR");
  app.add_option(
         "--preload", o.models.preload,
         "URDF files (FILE or FILE@TIP_LINK, with #floating or #planar for a moving root) to register "
         "and pin at start")
      ->envname("DENOC_PRELOAD")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->delimiter(',');
  app.add_option("--examples", o.models.examples, "preload the built-in example models (true/false)")
      ->envname("DENOC_EXAMPLES");
  app.add_option("--max-models", o.models.max_models, "models held in memory (least recently used evicted)")
      ->envname("DENOC_MAX_MODELS")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000000}));
  app.add_option("--max-models-per-principal", o.models.max_models_per_principal,
                 "models one principal may own in the store, over every replica sharing it (0: no bound; "
                 "callers without a token are one principal); more are refused (RESOURCE_EXHAUSTED)")
      ->envname("DENOC_MAX_MODELS_PER_PRINCIPAL")
      ->check(CLI::Range(std::size_t{0}, std::size_t{100000000}));
  app.add_option("--max-dof", o.limits.max_dof,
                 "largest model (velocity coordinates: joints, and a moving root's)")
      ->envname("DENOC_MAX_DOF")
      ->check(CLI::Range(1, 100000));
  app.add_option("--max-depth", o.limits.max_depth, "deepest tree (joints on a path from the root link)")
      ->envname("DENOC_MAX_DEPTH")
      ->check(CLI::Range(1, 100000));
  app.add_option("--max-states", o.limits.max_states, "most states per request")
      ->envname("DENOC_MAX_STATES")
      ->check(CLI::Range(1u, 100000000u));
  app.add_option("--max-message-bytes", o.limits.max_message_bytes, "largest request or response message")
      ->envname("DENOC_MAX_MESSAGE_BYTES")
      ->check(CLI::Range(std::size_t{1024}, std::size_t{2147483647}));
  // the compute threads
  app.add_option("--compute-threads", o.compute.threads,
                 "threads computing the calls' work (0: one per core, at least 2)")
      ->envname("DENOC_COMPUTE_THREADS")
      ->check(CLI::Range(0u, 1024u));
  app.add_option("--compute-queue", o.compute.queue,
                 "calls waiting for a compute thread; more are refused (RESOURCE_EXHAUSTED)")
      ->envname("DENOC_COMPUTE_QUEUE")
      ->check(CLI::Range(1u, 1000000u));
  app.add_option("--principal-queue", o.compute.principal_queue,
                 "calls of one principal waiting for a compute thread (0: half of --compute-queue)")
      ->envname("DENOC_PRINCIPAL_QUEUE")
      ->check(CLI::Range(0u, 1000000u));
  app.add_option("--batch-threads", o.compute.batch_threads,
                 "threads a large batch is split over, the calling one included (0: one per core; 1: none)")
      ->envname("DENOC_BATCH_THREADS")
      ->check(CLI::Range(0u, 1024u));
  app.add_option("--heap-keep-mb", o.compute.heap_keep_mb,
                 "MiB of freed memory kept for reuse, so large messages do not map fresh pages each call "
                 "(0: the C library's defaults)")
      ->envname("DENOC_HEAP_KEEP_MB")
      ->check(CLI::Range(0u, 2047u));
  // admission
  app.add_option("--max-streams", o.admission.max_streams, "concurrent Simulate and Stream calls")
      ->envname("DENOC_MAX_STREAMS")
      ->check(CLI::Range(1u, 1000000u));
  app.add_option("--max-inflight-states", o.admission.max_inflight_states,
                 "states being computed at once over all unary calls (0: 8 x --max-states)")
      ->envname("DENOC_MAX_INFLIGHT_STATES")
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{1} << 40));
  app.add_option("--principal-inflight-states", o.admission.principal_inflight_states,
                 "states one principal may have in flight (0: half of --max-inflight-states, at least "
                 "--max-states)")
      ->envname("DENOC_PRINCIPAL_INFLIGHT_STATES")
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{1} << 40));
  app.add_option("--principal-streams", o.admission.principal_streams,
                 "Simulate and Stream calls one principal may have open (0: half of --max-streams)")
      ->envname("DENOC_PRINCIPAL_STREAMS")
      ->check(CLI::Range(0u, 1000000u));
  // streams
  app.add_option("--idle-stream-timeout-ms", o.streams.idle_timeout_ms,
                 "close a Stream call whose client sends no message this long")
      ->envname("DENOC_IDLE_STREAM_TIMEOUT_MS")
      ->check(CLI::Range(10, 86400000));
  app.add_option("--write-stall-timeout-ms", o.streams.write_stall_timeout_ms,
                 "cancel a Simulate or Stream call whose client reads nothing this long")
      ->envname("DENOC_WRITE_STALL_TIMEOUT_MS")
      ->check(CLI::Range(10, 86400000));
  // the transport
  TransportOptions& t = o.transport;
  app.add_option("--keepalive-time-ms", t.keepalive_time_ms, "ping a connection idle this long")
      ->envname("DENOC_KEEPALIVE_TIME_MS")
      ->check(CLI::Range(1000, 86400000));
  app.add_option("--keepalive-timeout-ms", t.keepalive_timeout_ms, "close it when the ping is not answered")
      ->envname("DENOC_KEEPALIVE_TIMEOUT_MS")
      ->check(CLI::Range(100, 3600000));
  app.add_option("--max-connection-idle-ms", t.max_connection_idle_ms,
                 "close connections without calls this long (0: never)")
      ->envname("DENOC_MAX_CONNECTION_IDLE_MS")
      ->check(CLI::Range(0, 2147483647));
  app.add_option("--max-connection-age-ms", t.max_connection_age_ms,
                 "ask clients to reconnect after this long, so load spreads over new replicas (0: never)")
      ->envname("DENOC_MAX_CONNECTION_AGE_MS")
      ->check(CLI::Range(0, 2147483647));
  app.add_option("--max-concurrent-streams", t.max_concurrent_streams,
                 "HTTP/2 streams (calls) one connection may have open (SETTINGS_MAX_CONCURRENT_STREAMS)")
      ->envname("DENOC_MAX_CONCURRENT_STREAMS")
      ->check(CLI::Range(1u, 1000000u));
  app.add_option("--memory-quota-mb", t.memory_quota_mb,
                 "MiB gRPC may use for connections and calls (0: 4 x --max-message-bytes, at least 64)")
      ->envname("DENOC_MEMORY_QUOTA_MB")
      ->check(CLI::Range(0u, 1048576u));
  app.add_option("--grpc-arg", t.grpc_args,
                 "a gRPC channel argument with an integer value, NAME=VALUE (repeatable; e.g. "
                 "grpc.http2.max_frame_size=1048576)")
      ->envname("DENOC_GRPC_ARGS")
      ->delimiter(',');
  // shutdown, metrics, logs
  app.add_option("--shutdown-grace-ms", o.shutdown.grace_ms, "on SIGTERM, report NOT_SERVING this long first")
      ->envname("DENOC_SHUTDOWN_GRACE_MS")
      ->check(CLI::Range(0, 600000));
  app.add_option("--drain-timeout-ms", o.shutdown.drain_timeout_ms,
                 "then let calls in flight finish this long")
      ->envname("DENOC_DRAIN_TIMEOUT_MS")
      ->check(CLI::Range(0, 600000));
  app.add_option("--metrics-listen", o.metrics.listen, "host:port serving Prometheus metrics at /metrics")
      ->envname("DENOC_METRICS_LISTEN");
  app.add_option("--metrics-port-file", o.metrics.port_file, "write the metrics port to this file")
      ->envname("DENOC_METRICS_PORT_FILE");
  app.add_flag("--metrics-public", o.metrics.allow_public,
               "allow /metrics, which has no authentication, on an address other hosts can reach")
      ->envname("DENOC_METRICS_PUBLIC");
  app.add_option("--metrics-threads", o.metrics.http.threads,
                 "polling threads of /metrics (each serves many connections; an idle one holds none)")
      ->envname("DENOC_METRICS_THREADS")
      ->check(CLI::Range(1u, 64u));
  app.add_option("--metrics-timeout-ms", o.metrics.http.timeout_ms,
                 "a /metrics connection idle this long is closed (rounded up to whole seconds)")
      ->envname("DENOC_METRICS_TIMEOUT_MS")
      ->check(CLI::Range(100, 600000));
  app.add_option("--metrics-max-connections", o.metrics.http.max_connections,
                 "/metrics connections open at once; past it the oldest idle one ends")
      ->envname("DENOC_METRICS_MAX_CONNECTIONS")
      ->check(CLI::Range(1u, 65536u));
  app.add_option("--metrics-max-per-peer", o.metrics.http.max_per_peer,
                 "/metrics connections open at once from one peer address; past it its oldest idle one ends")
      ->envname("DENOC_METRICS_MAX_PER_PEER")
      ->check(CLI::Range(1u, 65536u));
  app.add_option("--log-level", o.log_level, "trace, debug, info, warn, error")
      ->envname("DENOC_LOG_LEVEL")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  bool check_config = false;
  app.add_flag("--check-config", check_config,
               "check the options and the environment (DENOC_*) as a start would, print them and exit: 0 "
               "when denocd would start with them, 2 when not (nothing is listened on or read)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    exit_code = app.exit(e);
    return false;
  }
  if (const std::string problem = checkOptions(o); !problem.empty()) {
    std::fprintf(stderr, "denocd: %s\n", problem.c_str());
    exit_code = 2;
    return false;
  }
  if (check_config) {
    std::printf("denocd %s: the configuration is valid: %s\n", DENOC_VERSION_STRING, o.describe().c_str());
    exit_code = 0;
    return false;
  }
  return true;
}

namespace {

bool isLoopbackIp(const std::string& host) {
  in_addr v4{};
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (::inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
  }
  return false;
}

/// Whether every address name resolves to is a loopback address (false when it resolves to none).
bool resolvesToLoopbackOnly(const std::string& name) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(name.c_str(), nullptr, &hints, &found) != 0 || !found) return false;
  bool all = true;
  for (const addrinfo* a = found; a; a = a->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    const void* raw =
        a->ai_family == AF_INET
            ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(a->ai_addr)->sin_addr)
            : static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(a->ai_addr)->sin6_addr);
    if ((a->ai_family != AF_INET && a->ai_family != AF_INET6) ||
        !::inet_ntop(a->ai_family, raw, text, sizeof text) || !isLoopbackIp(text)) {
      all = false;
      break;
    }
  }
  ::freeaddrinfo(found);
  return all;
}

}  // namespace

unsigned ServerOptions::computeThreads() const {
  if (compute.threads) return compute.threads;
  return std::max(2u, ::denoc::usableCores());
}

bool isLoopbackAddress(const std::string& address) {
  if (address.rfind("unix:", 0) == 0 || address.rfind("unix-abstract:", 0) == 0) return true;
  // one address only: no lists ("a,b"), no spaces
  if (address.find_first_of(", \t\r\n") != std::string::npos) return false;
  std::string host;
  if (!address.empty() && address.front() == '[') {
    const std::size_t close = address.find(']');
    if (close == std::string::npos) return false;
    const std::string rest = address.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return false;
    host = address.substr(1, close - 1);
  } else {
    const std::size_t colon = address.find(':');
    if (colon == std::string::npos) return false;  // a bare port listens on every interface
    if (address.find(':', colon + 1) != std::string::npos) return false;  // an IPv6 address wants brackets
    host = address.substr(0, colon);
  }
  if (isLoopbackIp(host)) return true;
  return host == "localhost" && resolvesToLoopbackOnly(host);
}

bool parseGrpcArg(const std::string& arg, std::string& name, int& value) {
  const std::size_t eq = arg.find('=');
  if (eq == std::string::npos || arg.rfind("grpc.", 0) != 0 || eq + 1 >= arg.size()) return false;
  name = arg.substr(0, eq);
  const std::string text = arg.substr(eq + 1);
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < INT_MIN || v > INT_MAX) return false;
  value = static_cast<int>(v);
  return true;
}

std::string checkOptions(const ServerOptions& o) {
  const SecurityOptions& sec = o.security;
  const std::string& listen = o.listen.address;
  if (sec.tls_cert.empty() != sec.tls_key.empty())
    return "--tls-cert and --tls-key (DENOC_TLS_CERT, DENOC_TLS_KEY) must be given together";
  if (!sec.tls_client_ca.empty() && !sec.tls())
    return "--tls-client-ca (DENOC_TLS_CLIENT_CA) needs TLS: give --tls-cert and --tls-key too";
  if (!sec.tls() && !sec.plaintext && !isLoopbackAddress(listen)) {
    return "refusing plaintext on " + listen +
           ", which other hosts can reach: give --tls-cert and --tls-key, or --plaintext "
           "(DENOC_PLAINTEXT=true) to allow it explicitly";
  }
  if (!o.listen.without_front && !isLoopbackAddress(listen)) {
    return "refusing to serve " + listen +
           " directly: other hosts could reach denocd without the front (deploy/nginx), and this gRPC (1.51) "
           "buffers an unfinished HTTP/2 header block without bound (CVE-2023-33953, fixed in gRPC 1.53.2, "
           "1.54.3, 1.55.2 and 1.56.2); listen on unix:PATH or loopback behind the front, or give "
           "--without-front (DENOC_WITHOUT_FRONT=true) to serve it directly anyway";
  }
  if (sec.trusted_front_header && listen.rfind("unix:", 0) != 0) {
    return "refusing --trusted-front-header (DENOC_TRUSTED_FRONT_HEADER) on " + listen +
           ": any client reaching it could name itself; listen on a unix socket (unix:PATH) that only the "
           "front can reach";
  }
  const AdmissionOptions& a = o.admission;
  const std::uint32_t max_states = o.limits.max_states;
  if (o.inflightStates() < max_states) {
    return "--max-inflight-states (" + std::to_string(a.max_inflight_states) + ") is below --max-states (" +
           std::to_string(max_states) + "): a request of max_states states could never run";
  }
  if (a.principal_inflight_states != 0 &&
      (a.principal_inflight_states < max_states || a.principal_inflight_states > o.inflightStates())) {
    return "--principal-inflight-states (" + std::to_string(a.principal_inflight_states) +
           ") must lie between --max-states (" + std::to_string(max_states) +
           ") and --max-inflight-states (" + std::to_string(o.inflightStates()) + ")";
  }
  if (a.principal_streams > a.max_streams) {
    return "--principal-streams (" + std::to_string(a.principal_streams) + ") is above --max-streams (" +
           std::to_string(a.max_streams) + ")";
  }
  if (o.compute.principal_queue > o.compute.queue) {
    return "--principal-queue (" + std::to_string(o.compute.principal_queue) +
           ") is above --compute-queue (" + std::to_string(o.compute.queue) + ")";
  }
  if (o.memoryQuotaBytes() < 2 * o.limits.max_message_bytes) {
    return "--memory-quota-mb (" + std::to_string(o.transport.memory_quota_mb) +
           ") leaves no room for two messages of --max-message-bytes (" +
           std::to_string(o.limits.max_message_bytes) + ")";
  }
  if (!o.metrics.port_file.empty() && o.metrics.listen.empty())
    return "--metrics-port-file needs --metrics-listen";
  if (!o.metrics.listen.empty() && !o.metrics.allow_public && !isLoopbackAddress(o.metrics.listen)) {
    return "refusing to serve /metrics, which has no authentication, on " + o.metrics.listen +
           ", which other hosts can reach: bind it to a loopback address, or give --metrics-public "
           "(DENOC_METRICS_PUBLIC=true) to allow it explicitly";
  }
  for (const std::string& arg : o.transport.grpc_args) {
    std::string name;
    int value = 0;
    if (!parseGrpcArg(arg, name, value))
      return "--grpc-arg '" + arg + "' is not NAME=VALUE with a grpc. name and an integer value";
  }
  return {};
}

}  // namespace denoc::server
