#include "metrics_http.hpp"

#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <list>
#include <mutex>
#include <stdexcept>

namespace denoc::server {

/// The daemon and the connections it holds, oldest first. A new connection that would pass a bound (in all,
/// or from its peer address) first ends the oldest connection that has not sent a request yet (an idle one:
/// shut down, which its poll sees as the peer's close), so idle connections can never keep a scrape out.
struct MetricsHttpServer::Daemon {
  struct Connection {
    int fd = -1;
    sockaddr_storage peer{};
    bool requested = false;  // a request arrived: it is being answered
    bool ended = false;      // shut down by an eviction, not yet closed by the daemon
  };
  MHD_Daemon* d = nullptr;
  std::function<std::string()> page;
  MetricsHttp http;
  std::mutex mutex;
  std::list<Connection> connections;  // oldest first

  ~Daemon() {
    if (d) MHD_stop_daemon(d);
  }

  /// Ends the oldest idle connection that `from` matches; false when there is none.
  template <typename Match>
  bool evictOldest(Match&& from) {
    for (Connection& c : connections) {
      if (c.requested || c.ended || !from(c)) continue;
      ::shutdown(c.fd, SHUT_RDWR);
      c.ended = true;
      return true;
    }
    return false;
  }
};

namespace {

/// host and port of "host:port", "[v6]:port" or a bare "port" (host empty).
void splitAddress(const std::string& address, std::string& host, std::string& port) {
  if (!address.empty() && address.front() == '[') {
    const std::size_t close = address.find(']');
    if (close == std::string::npos || close + 1 >= address.size() || address[close + 1] != ':')
      throw std::runtime_error("expected [IPv6]:PORT");
    host = address.substr(1, close - 1);
    port = address.substr(close + 2);
    return;
  }
  const std::size_t colon = address.rfind(':');
  if (colon == std::string::npos) {
    port = address;
    return;
  }
  host = address.substr(0, colon);
  port = address.substr(colon + 1);
}

bool samePeer(const sockaddr* a, const sockaddr_storage& b) {
  if (a->sa_family != b.ss_family) return false;
  if (a->sa_family == AF_INET) {
    return std::memcmp(&reinterpret_cast<const sockaddr_in*>(a)->sin_addr,
                       &reinterpret_cast<const sockaddr_in*>(&b)->sin_addr, sizeof(in_addr)) == 0;
  }
  if (a->sa_family == AF_INET6) {
    return std::memcmp(&reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr,
                       &reinterpret_cast<const sockaddr_in6*>(&b)->sin6_addr, sizeof(in6_addr)) == 0;
  }
  return false;
}

/// Room under both bounds for a new connection from `peer`, by ending the oldest idle connections; false when
/// every connection counted is being answered. Under d.mutex, where connections are also added, so that
/// connections accepted at once on several polling threads are all counted.
bool makeRoom(MetricsHttpServer::Daemon& d, const sockaddr_storage& peer) {
  const auto* addr = reinterpret_cast<const sockaddr*>(&peer);
  std::size_t open = 0, from_peer = 0;
  for (const auto& c : d.connections) {
    if (c.ended) continue;
    ++open;
    if (samePeer(addr, c.peer)) ++from_peer;
  }
  if (from_peer >= d.http.max_per_peer &&
      !d.evictOldest([addr](const auto& c) { return samePeer(addr, c.peer); }))
    return false;
  return open < d.http.max_connections || d.evictOldest([](const auto&) { return true; });
}

void track(void* cls, MHD_Connection* connection, void** socket_context, MHD_ConnectionNotificationCode toe) {
  auto& d = *static_cast<MetricsHttpServer::Daemon*>(cls);
  std::lock_guard lock(d.mutex);
  if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
    MetricsHttpServer::Daemon::Connection c;
    if (const MHD_ConnectionInfo* i = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD))
      c.fd = i->connect_fd;
    if (const MHD_ConnectionInfo* i =
            MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS)) {
      const sockaddr* a = i->client_addr;
      std::memcpy(&c.peer, a, a->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in));
    }
    if (!makeRoom(d, c.peer)) {  // refused: ended at once, counted as ended until the daemon closes it
      ::shutdown(c.fd, SHUT_RDWR);
      c.ended = true;
    }
    d.connections.push_back(c);
    *socket_context =
        new std::list<MetricsHttpServer::Daemon::Connection>::iterator(std::prev(d.connections.end()));
  } else if (*socket_context) {
    auto* at = static_cast<std::list<MetricsHttpServer::Daemon::Connection>::iterator*>(*socket_context);
    d.connections.erase(*at);
    delete at;
    *socket_context = nullptr;
  }
}

MHD_Result answer(void* cls, MHD_Connection* connection, const char* url, const char* method,
                  const char* /*version*/, const char* /*upload_data*/, std::size_t* upload_size,
                  void** /*con_cls*/) {
  auto& d = *static_cast<MetricsHttpServer::Daemon*>(cls);
  if (const MHD_ConnectionInfo* i = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
      i && i->socket_context) {
    std::lock_guard lock(d.mutex);
    (*static_cast<std::list<MetricsHttpServer::Daemon::Connection>::iterator*>(i->socket_context))
        ->requested = true;
  }
  const auto& page = d.page;
  unsigned status = MHD_HTTP_OK;
  std::string body;
  if (std::strcmp(method, "GET") != 0 && std::strcmp(method, "HEAD") != 0) {
    status = MHD_HTTP_METHOD_NOT_ALLOWED;
    body = "only GET /metrics\n";
  } else if (*upload_size != 0) {
    *upload_size = 0;  // a GET with a body: the body is ignored
    return MHD_YES;
  } else if (std::strcmp(url, "/metrics") != 0) {
    status = MHD_HTTP_NOT_FOUND;
    body = "not found: the metrics are at /metrics\n";
  } else {
    try {
      body = page();
    } catch (const std::exception& e) {
      status = MHD_HTTP_INTERNAL_SERVER_ERROR;
      body = std::string("cannot collect the metrics: ") + e.what() + "\n";
    }
  }
  MHD_Response* response = MHD_create_response_from_buffer(body.size(), body.data(), MHD_RESPMEM_MUST_COPY);
  if (!response) return MHD_NO;
  MHD_add_response_header(
      response, MHD_HTTP_HEADER_CONTENT_TYPE,
      status == MHD_HTTP_OK ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain; charset=utf-8");
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONNECTION, "close");
  const MHD_Result queued = MHD_queue_response(connection, status, response);
  MHD_destroy_response(response);
  return queued;
}

}  // namespace

MetricsHttpServer::MetricsHttpServer(const std::string& address, const MetricsHttp& http,
                                     std::function<std::string()> page)
    : daemon_(std::make_unique<Daemon>()) {
  daemon_->page = std::move(page);
  daemon_->http = http;
  daemon_->http.max_connections = std::max(1u, http.max_connections);
  daemon_->http.max_per_peer = std::max(1u, http.max_per_peer);
  std::string host, port;
  try {
    splitAddress(address, host, port);
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot serve metrics on " + address + ": " + e.what());
  }
  addrinfo hints{};
  hints.ai_family = host.empty() ? AF_INET : AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &found);
      rc != 0 || !found) {
    throw std::runtime_error("cannot serve metrics on " + address + ": " + ::gai_strerror(rc));
  }
  const bool v6 = found->ai_family == AF_INET6;
  const unsigned timeout_s = static_cast<unsigned>(std::max(1, (http.timeout_ms + 999) / 1000));
  const unsigned flags = static_cast<unsigned>(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL) |
                         (v6 ? static_cast<unsigned>(MHD_USE_IPv6) : 0u);
  // the daemon's own cap is above ours: evicted connections count until the daemon has closed them
  daemon_->d =
      MHD_start_daemon(flags, 0, nullptr, nullptr, &answer, daemon_.get(),                              //
                       MHD_OPTION_SOCK_ADDR, found->ai_addr,                                            //
                       MHD_OPTION_THREAD_POOL_SIZE, static_cast<unsigned>(std::max(1u, http.threads)),  //
                       MHD_OPTION_CONNECTION_LIMIT, 2 * daemon_->http.max_connections + 16,             //
                       MHD_OPTION_CONNECTION_TIMEOUT, timeout_s,                                        //
                       MHD_OPTION_NOTIFY_CONNECTION, &track, daemon_.get(),                             //
                       MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                       static_cast<std::size_t>(std::max(4096u, http.max_request_bytes)), MHD_OPTION_END);
  ::freeaddrinfo(found);
  if (!daemon_->d) throw std::runtime_error("cannot serve metrics on " + address + ": cannot listen there");
  const MHD_DaemonInfo* info = MHD_get_daemon_info(daemon_->d, MHD_DAEMON_INFO_BIND_PORT);
  port_ = info ? static_cast<int>(info->port) : 0;
  if (port_ <= 0) throw std::runtime_error("cannot serve metrics on " + address + ": no port");
}

MetricsHttpServer::~MetricsHttpServer() = default;

}  // namespace denoc::server
