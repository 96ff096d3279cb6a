#include "transport.hpp"

#include <grpc/grpc_security_constants.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>

#include <fstream>
#include <sstream>

#include "identity.hpp"

namespace denoc::server {

std::string readFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  std::ostringstream os;
  os << f.rdbuf();
  return os.str();
}

Credentials makeCredentials(const ServerOptions& options, const TokenAuth* auth) {
  const SecurityOptions& o = options.security;
  const std::string& listen = options.listen.address;
  Credentials c;
  if (o.tls()) {
    const grpc_ssl_client_certificate_request_type request =
        o.tls_client_ca.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
    // read here first, so that a missing or unreadable file stops the start with its name
    const std::string key = readFile(o.tls_key), cert = readFile(o.tls_cert);
    const std::string client_ca = o.tls_client_ca.empty() ? std::string() : readFile(o.tls_client_ca);
    if (o.tls_reload_s == 0) {
      grpc::SslServerCredentialsOptions ssl(request);
      ssl.pem_key_cert_pairs.push_back({key, cert});
      ssl.pem_root_certs = client_ca;
      c.credentials = grpc::SslServerCredentials(ssl);
    } else {
      // gRPC's file watcher reads the files again every tls_reload_s seconds. A certificate read before its
      // key has arrived (half a rotation) is taken as it is, and new handshakes fail until the next read
      // has both: rotations swap a directory in one rename (docs/service.md, "Certificate rotation")
      auto provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
          o.tls_key, o.tls_cert, o.tls_client_ca, o.tls_reload_s);
      grpc::experimental::TlsServerCredentialsOptions tls(provider);
      tls.watch_identity_key_cert_pairs();
      if (!o.tls_client_ca.empty()) tls.watch_root_certs();
      tls.set_cert_request_type(request);
      c.credentials = grpc::experimental::TlsServerCredentials(tls);
    }
    c.kind = o.tls_client_ca.empty() ? "TLS" : "mutual TLS";
  } else if (auth && listen.rfind("unix:", 0) == 0) {
    c.credentials = grpc::experimental::LocalServerCredentials(UDS);
  } else if (auth && isLoopbackAddress(listen) && listen.rfind("unix", 0) != 0) {
    c.credentials = grpc::experimental::LocalServerCredentials(LOCAL_TCP);
  } else {
    c.credentials = grpc::InsecureServerCredentials();  // cannot run an auth processor
    return c;
  }
  if (auth) {
    c.credentials->SetAuthMetadataProcessor(std::make_shared<TokenProcessor>(*auth));
    c.tokens_on_headers = true;
  }
  return c;
}

void configureTransport(grpc::ServerBuilder& builder, const ServerOptions& options,
                        grpc::ResourceQuota& quota) {
  const TransportOptions& o = options.transport;
  // one server per port: gRPC's SO_REUSEPORT would let a second denocd (start.sh run twice, or beside the
  // Debian package's service) bind the same port and take every other connection
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // connections: keepalive pings, idle and age limits (docs/service.md "Resource protection")
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, o.keepalive_time_ms);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, o.keepalive_timeout_ms);
  // clients may ping every 10 s, also between calls, without being told off (GOAWAY too_many_pings)
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 10000);
  if (o.max_connection_idle_ms > 0)
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS, o.max_connection_idle_ms);
  if (o.max_connection_age_ms > 0) {
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS, o.max_connection_age_ms);
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS, options.shutdown.drain_timeout_ms);
  }
  // bounds per connection: calls open at once (SETTINGS_MAX_CONCURRENT_STREAMS), the size of a call's headers
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, static_cast<int>(o.max_concurrent_streams));
  builder.AddChannelArgument(GRPC_ARG_MAX_METADATA_SIZE, kMaxMetadataBytes);
  // compressed requests are refused on their headers (UNIMPLEMENTED "Compression algorithm 'gzip' is
  // disabled"), before any byte is inflated: only identity is enabled; nor is anything decompressed
  builder.AddChannelArgument(GRPC_COMPRESSION_CHANNEL_ENABLED_ALGORITHMS_BITSET, 1 << GRPC_COMPRESS_NONE);
  builder.AddChannelArgument(GRPC_ARG_ENABLE_PER_MESSAGE_DECOMPRESSION, 0);
  builder.SetMaxReceiveMessageSize(static_cast<int>(options.limits.max_message_bytes));
  builder.SetMaxSendMessageSize(static_cast<int>(options.limits.max_message_bytes));
  // memory of connections and calls (under pressure gRPC shrinks buffers, then closes connections); every
  // service is on the callback API (health, reflection.cpp, service.cpp), so no synchronous pool is made
  quota.Resize(options.memoryQuotaBytes());
  builder.SetResourceQuota(quota);
  for (const std::string& arg : o.grpc_args) {  // checked by checkOptions
    std::string name;
    int value = 0;
    if (parseGrpcArg(arg, name, value)) builder.AddChannelArgument(name, value);
  }
}

}  // namespace denoc::server
