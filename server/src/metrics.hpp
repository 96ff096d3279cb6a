// Metrics of denocd for a platform team to scrape (Prometheus text format at /metrics, prometheus-cpp):
// requests by RPC and status code, latency histograms by RPC, states computed, calls and states in flight,
// models cached and pinned, models and bytes in the store, failed-call log lines held back by the rate
// limit. Recording is lock-free apart from one short mutex per RPC's histogram; the gauges of the registry
// and the store are read when scraped.
#pragma once

#include <grpcpp/support/status_code_enum.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "metrics_http.hpp"

namespace prometheus {
class Counter;
class Gauge;
class Histogram;
class Registry;
}  // namespace prometheus

namespace denoc::server {

/// The RPCs of denoc.v1.Dynamics, and server reflection's stream, as metric labels.
enum class Rpc {
  RegisterModel,
  GetModel,
  ListModels,
  DeleteModel,
  InverseDynamics,
  ForwardDynamics,
  FullFactor,
  Simulate,
  Stream,
  GetServerInfo,
  Kinematics,
  Derivatives,
  Rollout,
  ServerReflectionInfo,  // grpc.reflection.v1alpha.ServerReflection
};
inline constexpr std::size_t kRpcCount = 14;
const char* rpcName(Rpc rpc);

/// What the scrape reads from the registry, the store and the admission control.
struct ModelGauges {
  std::function<std::size_t()> cached;                           // models in memory
  std::function<std::size_t()> pinned;                           // of which pinned
  std::function<std::pair<std::size_t, std::uint64_t>()> store;  // files and bytes in the store
  std::function<std::uint64_t()> inflight_states;                // states admitted to unary calls
  std::function<std::size_t()> compute_queued;                   // work waiting for a compute thread
  std::function<std::size_t()> compute_busy;                     // compute threads running work
  std::size_t compute_threads = 0;
};

class Metrics {
 public:
  explicit Metrics(ModelGauges gauges);
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  /// One finished call: its status, its duration, the states it computed.
  void record(Rpc rpc, grpc::StatusCode code, double seconds, std::uint64_t states);

  /// Calls in flight by RPC (gauges).
  void callStarted(Rpc rpc);
  void callEnded(Rpc rpc);

  /// Serves /metrics on host:port (port 0: a free one) with http's threads, bounds and timeout. Returns the
  /// port.
  /// Throws std::runtime_error.
  int serve(const std::string& address, const MetricsHttp& http = {});

  /// Stops serving /metrics (joins its threads; no scrape runs after it returns).
  void stopServing();

  /// The text a scrape would get (for tests and logs).
  std::string text() const;

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<class ModelCollectable> models_;
  std::shared_ptr<class LogCollectable> log_;
  // [rpc][code]
  std::array<std::array<prometheus::Counter*, 17>, kRpcCount> requests_{};
  std::array<prometheus::Histogram*, kRpcCount> latency_{};
  std::array<prometheus::Counter*, kRpcCount> states_{};
  std::array<prometheus::Gauge*, kRpcCount> inflight_{};
  std::unique_ptr<MetricsHttpServer> http_;
};

}  // namespace denoc::server
