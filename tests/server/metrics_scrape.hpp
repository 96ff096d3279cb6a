// Scrapes denocd's Prometheus endpoint over a plain HTTP/1.0 GET on 127.0.0.1 and parses the text format
// into series -> value (the series as written: name{label="value",...}).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

namespace denoc::test {

inline std::string httpGet(int port, const std::string& path) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot connect to the metrics port " + std::to_string(port));
  }
  const std::string req = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  if (::write(fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) {
    ::close(fd);
    throw std::runtime_error("cannot send the metrics request");
  }
  std::string resp;
  char buf[8192];
  for (ssize_t r; (r = ::read(fd, buf, sizeof buf)) > 0;) resp.append(buf, static_cast<std::size_t>(r));
  ::close(fd);
  return resp;
}

/// series -> value of a /metrics answer (comments skipped).
inline std::map<std::string, double> scrapeMetrics(int port) {
  const std::string resp = httpGet(port, "/metrics");
  if (resp.rfind("HTTP/1.", 0) != 0 || resp.find(" 200 ") == std::string::npos)
    throw std::runtime_error("metrics answer is not 200 OK:\n" + resp.substr(0, 200));
  const std::size_t body = resp.find("\r\n\r\n");
  std::istringstream in(resp.substr(body == std::string::npos ? 0 : body + 4));
  std::map<std::string, double> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::size_t sp = line.rfind(' ');
    if (sp == std::string::npos) continue;
    out[line.substr(0, sp)] = std::stod(line.substr(sp + 1));
  }
  return out;
}

/// The value of a series, 0 when absent.
inline double metric(const std::map<std::string, double>& m, const std::string& series) {
  const auto it = m.find(series);
  return it == m.end() ? 0.0 : it->second;
}

}  // namespace denoc::test
