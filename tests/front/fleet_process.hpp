// Test support for a fleet behind the L7 balancer, with real processes: three denocd replicas sharing one
// store, each on a unix socket behind its own front (deploy/nginx/denoc.conf), and the balancer
// (deploy/nginx/balancer.conf, run by deploy/nginx/front.sh) passing each call to one replica's front in turn
// over mutual TLS. A replica can be killed and started again on its socket; a balancer can be rendered anew
// over more replicas and reloaded (SIGHUP), as front.sh does when the replicas' addresses change. Every wait
// is bounded in time.
#pragma once

#include <array>
#include <thread>

#include "front_process.hpp"

namespace denoc::test {

class BalancedFleet {
 public:
  static constexpr int kReplicas = 3;

  /// Certificates, the replicas and their fronts, and a balancer (balancer()) over the first `balanced`.
  explicit BalancedFleet(int balanced = kReplicas) : tls_(dir_.str()) {
    for (int r = 0; r < kReplicas; ++r) {
      startReplica(r);
      front_port_[r] = freePort();
      front_[r] = startFront(dir_.str(name(r) + "-front"),
                             "--listen 127.0.0.1:" + std::to_string(front_port_[r]) + " --socket " +
                                 socket(r) + " --cert " + tls_.server_cert + " --key " + tls_.server_key +
                                 " --client-ca " + tls_.ca,
                             tls_.server_cert, dir_.str(name(r) + "-front.log"));
      if (!connects(frontChannel(front_port_[r], tls_.ca, tls_.client_cert, tls_.client_key), 30s))
        throw std::runtime_error("front " + std::to_string(r) + " does not answer:\n" + front_[r]->log());
    }
    balancer_ = startBalancer("balancer", balancer_port_, balanced);
  }
  ~BalancedFleet() {
    balancer_.reset();
    for (int r = kReplicas - 1; r >= 0; --r) {
      front_[r].reset();
      denocd_[r].reset();
    }
  }
  BalancedFleet(const BalancedFleet&) = delete;
  BalancedFleet& operator=(const BalancedFleet&) = delete;

  const TempDir& dir() const { return dir_; }
  const TlsMaterial& tls() const { return tls_; }
  std::string store() const { return dir_.str("store"); }
  std::string socket(int r) const { return dir_.str(name(r) + ".sock"); }
  int frontPort(int r) const { return front_port_[r]; }
  Child& replica(int r) { return *denocd_[r]; }
  Child& balancer() { return *balancer_; }
  int balancerPort() const { return balancer_port_; }

  /// Starts denocd r on its socket (again, after a kill: the same socket and store); waits until it answers.
  void startReplica(int r) {
    denocd_[r].reset();  // a replica still running is killed first
    denocd_[r] = std::make_unique<Child>(
        std::vector<std::string>{DENOC_DENOCD, "--listen", "unix:" + socket(r), "--trusted-front-header",
                                 "--store-dir", store(), "--principal-streams", "1", "--shutdown-grace-ms",
                                 "0"},
        dir_.str(name(r) + ".log"));
    if (!connects(direct(r), 30s))
      throw std::runtime_error("replica " + std::to_string(r) + " does not answer:\n" + denocd_[r]->log());
  }
  /// Kills denocd r with SIGKILL and waits for its end (its front stays).
  void killReplica(int r) { denocd_[r].reset(); }

  /// A plaintext channel straight to replica r's socket (not through any front).
  std::shared_ptr<grpc::Channel> direct(int r) const {
    return grpc::CreateChannel("unix:" + socket(r), grpc::InsecureChannelCredentials());
  }

  /// A balancer named `prefix` (a directory in the fleet's) on a free port (stored in `port`) over the first
  /// `replicas` fronts; waits until it answers.
  std::unique_ptr<Child> startBalancer(const std::string& prefix, int& port, int replicas) {
    port = freePort();
    auto b = startFront(dir_.str(prefix), balancerArgs(port, replicas), tls_.server_cert,
                        dir_.str(prefix + ".log"));
    if (!connects(frontChannel(port, tls_.ca, tls_.client_cert, tls_.client_key), 30s))
      throw std::runtime_error("the balancer does not answer:\n" + b->log());
    return b;
  }
  /// Renders balancer `prefix` (on `port`) anew over the first `replicas` fronts and reloads it (SIGHUP to
  /// front.sh, which passes it to nginx); returns the time of the reload. Throws when render.sh fails.
  std::chrono::steady_clock::time_point scaleBalancer(Child& balancer, const std::string& prefix, int port,
                                                      int replicas) {
    const std::string render = std::string("bash ") + DENOC_SOURCE_DIR + "/deploy/nginx/render.sh " +
                               dir_.str(prefix) + " " + balancerArgs(port, replicas) +
                               " --workers 1 --access-log " + dir_.str(prefix) + "/access.log" +
                               (::geteuid() == 0 ? " --user root" : "");
    if (std::system(render.c_str()) != 0) throw std::runtime_error("render.sh failed: " + render);
    const auto reloaded = std::chrono::steady_clock::now();
    ::kill(balancer.pid(), SIGHUP);
    return reloaded;
  }

  /// The calls each replica's front has passed on so far (the lines of its access log).
  std::array<int, kReplicas> perReplica() const {
    std::array<int, kReplicas> n{};
    for (int r = 0; r < kReplicas; ++r) n[r] = callsLogged(dir_.str(name(r) + "-front"));
    return n;
  }
  /// perReplica() once it stays the same for 200 ms (at most 5 s): nginx writes a call's line when the call
  /// has ended, after the client may have had its answer.
  std::array<int, kReplicas> settledPerReplica() const {
    auto n = perReplica();
    for (int k = 0; k < 25; ++k) {
      std::this_thread::sleep_for(200ms);
      const auto again = perReplica();
      if (again == n) break;
      n = again;
    }
    return n;
  }
  /// The seconds from `since` until replica r's front logged more than `before` calls (polled every 20 ms),
  /// or a negative number when it did not within `timeout`.
  double secondsUntilCalled(int r, int before, std::chrono::steady_clock::time_point since,
                            std::chrono::seconds timeout) const {
    while (std::chrono::steady_clock::now() - since < timeout) {
      if (perReplica()[r] > before)
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
      std::this_thread::sleep_for(20ms);
    }
    return -1;
  }

 private:
  static std::string name(int r) { return "replica" + std::to_string(r); }
  /// render.sh's arguments for a balancer on `port` over the first `replicas` fronts.
  std::string balancerArgs(int port, int replicas) const {
    std::string args = "--site balancer --listen 127.0.0.1:" + std::to_string(port) +
                       " --upstream-name localhost --balancer-cert " + tls_.balancer_cert +
                       " --balancer-key " + tls_.balancer_key + " --cert " + tls_.server_cert + " --key " +
                       tls_.server_key + " --client-ca " + tls_.ca;
    for (int r = 0; r < replicas; ++r) args += " --upstream 127.0.0.1:" + std::to_string(front_port_[r]);
    return args;
  }

  TempDir dir_;
  TlsMaterial tls_;
  std::unique_ptr<Child> denocd_[kReplicas];
  std::unique_ptr<Child> front_[kReplicas];
  int front_port_[kReplicas] = {};
  std::unique_ptr<Child> balancer_;
  int balancer_port_ = 0;
};

}  // namespace denoc::test
