// The HTTP side of /metrics (libmicrohttpd): one polling thread (or a few) serves every connection, so a
// client that connects and stays idle, or sends half a request, holds no worker and cannot make a scrape
// wait. Connections are bounded in number (in all and per peer address): a new one past a bound ends the
// oldest connection that has sent no request (docs/service.md, "Metrics"); one idle for the timeout is
// closed.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace denoc::server {

/// How /metrics is served.
struct MetricsHttp {
  unsigned threads = 4;                // polling threads (each serves many connections)
  int timeout_ms = 5000;               // a connection idle this long is closed (rounded up to whole seconds)
  unsigned max_connections = 256;      // connections open at once, in all (past it: the oldest idle one ends)
  unsigned max_per_peer = 64;          // connections open at once from one peer address (the same)
  unsigned max_request_bytes = 16384;  // a request's line and headers
};

/// Serves GET /metrics with the text `page()` gives (Prometheus text format), 404 for other paths, 405 for
/// other methods; every answer closes its connection. Stops in the destructor.
class MetricsHttpServer {
 public:
  /// Listens on host:port (port 0: a free one; a bare port: every IPv4 interface). Throws std::runtime_error
  /// naming the address.
  MetricsHttpServer(const std::string& address, const MetricsHttp& http, std::function<std::string()> page);
  ~MetricsHttpServer();
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  /// The port listened on.
  int port() const { return port_; }

  struct Daemon;

 private:
  std::unique_ptr<Daemon> daemon_;
  int port_ = 0;
};

}  // namespace denoc::server
