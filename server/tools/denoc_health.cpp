// denoc-health: asks a gRPC server's standard health service (grpc.health.v1.Health/Check) whether it is
// SERVING, for container health checks and Kubernetes exec probes. Every option is also an environment
// variable, so `denoc-health` with no argument works inside a denocd container:
//   - the address defaults to DENOC_HEALTH_ADDRESS, else to the port of DENOC_LISTEN on 127.0.0.1 (when
//     denocd listens on a wildcard address), else to 127.0.0.1:50051;
//   - TLS is on when asked for (--tls, DENOC_HEALTH_TLS), when a TLS option of the probe is set, or when
//     denocd's own DENOC_TLS_CERT is set in the environment (the server then serves TLS only).
// Exit codes (those of the widely used grpc_health_probe): 0 SERVING, 1 bad arguments or unreadable files,
// 2 cannot connect (UNAVAILABLE), 3 the health call failed otherwise (e.g. NOT_FOUND for an unknown
// service, DEADLINE_EXCEEDED), 4 the server answered but is not SERVING (NOT_SERVING while draining).
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

#include "denoc/v1/status_name.hpp"
#include "grpc/health/v1/health.grpc.pb.h"

namespace {

constexpr int kServing = 0, kBadArguments = 1, kConnectFailed = 2, kRpcFailed = 3, kNotServing = 4;

constexpr const char* kUsage = R"(usage: denoc-health [options]
Checks grpc.health.v1 on a gRPC server; exit 0 only when it answers SERVING.

  --address HOST:PORT     server (DENOC_HEALTH_ADDRESS; default: the port of DENOC_LISTEN on 127.0.0.1,
                          else 127.0.0.1:50051)
  --service NAME          service to ask about, "" for the whole server (DENOC_HEALTH_SERVICE; default "")
  --timeout-ms MS         deadline of the whole check (DENOC_HEALTH_TIMEOUT_MS; default 2000)
  --tls[=true|false]      use TLS (DENOC_HEALTH_TLS; default: on when another TLS option below or
                          denocd's DENOC_TLS_CERT is set)
  --tls-ca FILE           PEM roots that verify the server (DENOC_HEALTH_TLS_CA; default: system roots)
  --tls-cert FILE         client certificate for mutual TLS (DENOC_HEALTH_TLS_CERT)
  --tls-key FILE          its private key (DENOC_HEALTH_TLS_KEY)
  --tls-server-name NAME  name to verify in the server's certificate instead of the address's host
                          (DENOC_HEALTH_TLS_SERVER_NAME)
  --quiet                 print nothing on success (DENOC_HEALTH_QUIET)
  --help                  this text

exit codes: 0 SERVING, 1 bad arguments, 2 cannot connect, 3 health call failed, 4 not SERVING
)";

struct Options {
  std::string address;
  std::string service;
  long timeout_ms = 2000;
  std::optional<bool> tls;
  std::string tls_ca, tls_cert, tls_key, tls_server_name;
  bool quiet = false;
};

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

bool parseBool(const std::string& what, const std::string& v) {
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off" || v.empty()) return false;
  throw UsageError(what + ": expected true or false, got '" + v + "'");
}

long parseMillis(const std::string& what, const std::string& v) {
  std::size_t used = 0;
  long ms = 0;
  try {
    ms = std::stol(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != v.size() || ms <= 0 || ms > 3600000)
    throw UsageError(what + ": expected milliseconds in 1..3600000, got '" + v + "'");
  return ms;
}

// 127.0.0.1:PORT for a wildcard listen address (0.0.0.0, [::], or no host), the address itself otherwise
std::string addressFromListen(const std::string& listen) {
  const std::size_t colon = listen.rfind(':');
  if (colon == std::string::npos) throw UsageError("DENOC_LISTEN='" + listen + "' has no port");
  const std::string host = listen.substr(0, colon), port = listen.substr(colon + 1);
  if (port.empty() || port == "0")
    throw UsageError("DENOC_LISTEN='" + listen + "' does not name a fixed port: give --address");
  if (host.empty() || host == "0.0.0.0" || host == "[::]" || host == "::" || host == "*")
    return "127.0.0.1:" + port;
  return listen;
}

// environment first, then the command line over it
Options parse(int argc, char** argv) {
  Options o;
  if (auto v = env("DENOC_HEALTH_ADDRESS"); v && !v->empty())
    o.address = *v;
  else if (auto l = env("DENOC_LISTEN"); l && !l->empty())
    o.address = addressFromListen(*l);
  else
    o.address = "127.0.0.1:50051";
  if (auto v = env("DENOC_HEALTH_SERVICE")) o.service = *v;
  if (auto v = env("DENOC_HEALTH_TIMEOUT_MS"); v && !v->empty())
    o.timeout_ms = parseMillis("DENOC_HEALTH_TIMEOUT_MS", *v);
  if (auto v = env("DENOC_HEALTH_TLS"); v && !v->empty()) o.tls = parseBool("DENOC_HEALTH_TLS", *v);
  if (auto v = env("DENOC_HEALTH_TLS_CA")) o.tls_ca = *v;
  if (auto v = env("DENOC_HEALTH_TLS_CERT")) o.tls_cert = *v;
  if (auto v = env("DENOC_HEALTH_TLS_KEY")) o.tls_key = *v;
  if (auto v = env("DENOC_HEALTH_TLS_SERVER_NAME")) o.tls_server_name = *v;
  if (auto v = env("DENOC_HEALTH_QUIET"); v && !v->empty()) o.quiet = parseBool("DENOC_HEALTH_QUIET", *v);

  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    bool has_value = false;
    if (const std::size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    auto next = [&]() -> std::string {
      if (has_value) return value;
      if (i + 1 >= argc) throw UsageError(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h")
      throw UsageError("");
    else if (arg == "--address")
      o.address = next();
    else if (arg == "--service")
      o.service = next();
    else if (arg == "--timeout-ms")
      o.timeout_ms = parseMillis(arg, next());
    else if (arg == "--tls")
      o.tls = has_value ? parseBool(arg, value) : true;
    else if (arg == "--tls-ca")
      o.tls_ca = next();
    else if (arg == "--tls-cert")
      o.tls_cert = next();
    else if (arg == "--tls-key")
      o.tls_key = next();
    else if (arg == "--tls-server-name")
      o.tls_server_name = next();
    else if (arg == "--quiet")
      o.quiet = has_value ? parseBool(arg, value) : true;
    else
      throw UsageError("unknown option '" + arg + "'");
  }
  if (o.address.empty()) throw UsageError("the address is empty");
  if (o.tls_cert.empty() != o.tls_key.empty())
    throw UsageError(
        "mutual TLS needs both --tls-cert and --tls-key (DENOC_HEALTH_TLS_CERT, DENOC_HEALTH_TLS_KEY)");
  if (!o.tls) {
    const auto server_cert = env("DENOC_TLS_CERT");
    o.tls = !o.tls_ca.empty() || !o.tls_cert.empty() || !o.tls_server_name.empty() ||
            (server_cert && !server_cert->empty());
  }
  return o;
}

std::string readFile(const std::string& path, const std::string& what) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream os;
  os << f.rdbuf();
  if (!f || os.str().empty()) throw UsageError("cannot read the " + what + " '" + path + "'");
  return os.str();
}

std::shared_ptr<grpc::Channel> makeChannel(const Options& o) {
  grpc::ChannelArguments args;
  // one attempt, no retries: the probe's caller (Docker, the kubelet) decides when to ask again
  args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
  if (!*o.tls) return grpc::CreateCustomChannel(o.address, grpc::InsecureChannelCredentials(), args);
  grpc::SslCredentialsOptions ssl;
  if (!o.tls_ca.empty()) ssl.pem_root_certs = readFile(o.tls_ca, "TLS CA file");
  if (!o.tls_cert.empty()) {
    ssl.pem_cert_chain = readFile(o.tls_cert, "TLS client certificate");
    ssl.pem_private_key = readFile(o.tls_key, "TLS client key");
  }
  if (!o.tls_server_name.empty()) args.SetSslTargetNameOverride(o.tls_server_name);
  return grpc::CreateCustomChannel(o.address, grpc::SslCredentials(ssl), args);
}

const char* statusName(grpc::health::v1::HealthCheckResponse::ServingStatus s) {
  using R = grpc::health::v1::HealthCheckResponse;
  switch (s) {
    case R::SERVING:
      return "SERVING";
    case R::NOT_SERVING:
      return "NOT_SERVING";
    case R::SERVICE_UNKNOWN:
      return "SERVICE_UNKNOWN";
    default:
      return "UNKNOWN";
  }
}

}  // namespace

int main(int argc, char** argv) {
  // the status message carries gRPC's error: no second copy in gRPC's own log (unless asked for)
  ::setenv("GRPC_VERBOSITY", "NONE", 0);
  Options o;
  std::shared_ptr<grpc::Channel> channel;
  try {
    o = parse(argc, argv);
    channel = makeChannel(o);
  } catch (const UsageError& e) {
    if (std::string(e.what()).empty()) {
      std::fputs(kUsage, stdout);
      return kServing;
    }
    std::fprintf(stderr, "denoc-health: %s\n", e.what());
    return kBadArguments;
  }
  const std::string what =
      o.address + (o.service.empty() ? "" : " service " + o.service) + (*o.tls ? " (TLS)" : " (plaintext)");

  auto stub = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(o.timeout_ms));
  // fail fast: a refused connection or a failed handshake is an answer (UNAVAILABLE), not a reason to wait
  context.set_wait_for_ready(false);
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(o.service);
  grpc::health::v1::HealthCheckResponse response;
  const grpc::Status status = stub->Check(&context, request, &response);
  if (!status.ok()) {
    const bool connect = status.error_code() == grpc::StatusCode::UNAVAILABLE;
    const char* hint = connect && *o.tls
                           ? " (TLS: check the CA, the server name and, for mutual TLS, the client "
                             "certificate: --tls-ca, --tls-server-name, --tls-cert/--tls-key)"
                           : "";
    std::fprintf(stderr, "denoc-health: %s: %s: %s: %s%s\n", what.c_str(),
                 connect ? "cannot connect" : "health check failed",
                 denoc::v1::statusName(status.error_code()).c_str(), status.error_message().c_str(), hint);
    return connect ? kConnectFailed : kRpcFailed;
  }
  if (response.status() != grpc::health::v1::HealthCheckResponse::SERVING) {
    std::fprintf(stderr, "denoc-health: %s: %s\n", what.c_str(), statusName(response.status()));
    return kNotServing;
  }
  if (!o.quiet) std::printf("%s: SERVING\n", what.c_str());
  return kServing;
}
