#include "metrics.hpp"

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <stdexcept>

#include "errors.hpp"
#include "log.hpp"

namespace denoc::server {

const char* rpcName(Rpc rpc) {
  static constexpr const char* names[kRpcCount] = {"RegisterModel",   "GetModel",
                                                   "ListModels",      "DeleteModel",
                                                   "InverseDynamics", "ForwardDynamics",
                                                   "FullFactor",      "Simulate",
                                                   "Stream",          "GetServerInfo",
                                                   "Kinematics",      "Derivatives",
                                                   "Rollout",         "ServerReflectionInfo"};
  return names[static_cast<std::size_t>(rpc)];
}

/// Gauges read from the registry and the store at scrape time.
class ModelCollectable : public prometheus::Collectable {
 public:
  explicit ModelCollectable(ModelGauges g) : g_(std::move(g)) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    const auto [files, bytes] = g_.store();
    return {
        gauge("denoc_models_cached", "Models held in memory", static_cast<double>(g_.cached())),
        gauge("denoc_models_pinned", "Pinned models (built-in and preloaded)",
              static_cast<double>(g_.pinned())),
        gauge("denoc_store_models", "Model files in the store directory", static_cast<double>(files)),
        gauge("denoc_store_bytes", "Bytes of model files in the store directory", static_cast<double>(bytes)),
        gauge("denoc_states_in_flight",
              "States admitted to unary calls being computed (--max-inflight-states)",
              static_cast<double>(g_.inflight_states())),
        gauge("denoc_compute_queue_depth",
              "Pieces of work (unary calls, stream steps) waiting for a compute thread",
              static_cast<double>(g_.compute_queued ? g_.compute_queued() : 0)),
        gauge("denoc_compute_threads_busy", "Compute threads running work now",
              static_cast<double>(g_.compute_busy ? g_.compute_busy() : 0)),
        gauge("denoc_compute_threads", "Compute threads (--compute-threads; 0 there: the usable cores)",
              static_cast<double>(g_.compute_threads))};
  }

 private:
  static prometheus::MetricFamily gauge(const char* name, const char* help, double value) {
    prometheus::MetricFamily f;
    f.name = name;
    f.help = help;
    f.type = prometheus::MetricType::Gauge;
    prometheus::ClientMetric m;
    m.gauge.value = value;
    f.metric.push_back(m);
    return f;
  }
  ModelGauges g_;
};

/// Failed-call log lines held back by the rate limit (failedCallLog()), read when scraped.
class LogCollectable : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override {
    prometheus::MetricFamily f;
    f.name = "denoc_log_lines_suppressed_total";
    f.help = "Failed-call log lines not written by the rate limit, by RPC and gRPC status code";
    f.type = prometheus::MetricType::Counter;
    for (const auto& [kind, count] : failedCallLog().heldBack()) {
      prometheus::ClientMetric m;
      m.label = {{"code", kind.second}, {"rpc", kind.first}};  // sorted, as prometheus-cpp writes families
      m.counter.value = static_cast<double>(count);
      f.metric.push_back(std::move(m));
    }
    return {f};
  }
};

Metrics::Metrics(ModelGauges gauges)
    : registry_(std::make_shared<prometheus::Registry>()),
      models_(std::make_shared<ModelCollectable>(std::move(gauges))),
      log_(std::make_shared<LogCollectable>()) {
  auto& requests = prometheus::BuildCounter()
                       .Name("denoc_requests_total")
                       .Help("Finished calls of denoc.v1.Dynamics by RPC and gRPC status code")
                       .Register(*registry_);
  auto& latency = prometheus::BuildHistogram()
                      .Name("denoc_request_duration_seconds")
                      .Help("Time in the handler by RPC (the whole call for Simulate and Stream)")
                      .Register(*registry_);
  auto& states = prometheus::BuildCounter()
                     .Name("denoc_states_total")
                     .Help("States computed (batch rows, stream messages, simulation samples) by RPC")
                     .Register(*registry_);
  auto& inflight = prometheus::BuildGauge()
                       .Name("denoc_calls_in_flight")
                       .Help("Calls in their handler by RPC (open streams for Simulate and Stream)")
                       .Register(*registry_);
  // 10 us .. 50 s in steps of 1, 2.5, 5 per decade
  prometheus::Histogram::BucketBoundaries bounds;
  for (double decade = 1e-5; decade < 100.0; decade *= 10.0) {
    for (double step : {1.0, 2.5, 5.0}) bounds.push_back(decade * step);
  }
  for (std::size_t r = 0; r < kRpcCount; ++r) {
    const std::string rpc = rpcName(static_cast<Rpc>(r));
    for (int c = 0; c <= 16; ++c) {
      requests_[r][static_cast<std::size_t>(c)] =
          &requests.Add({{"rpc", rpc}, {"code", codeName(static_cast<grpc::StatusCode>(c))}});
    }
    latency_[r] = &latency.Add({{"rpc", rpc}}, bounds);
    states_[r] = &states.Add({{"rpc", rpc}});
    inflight_[r] = &inflight.Add({{"rpc", rpc}});
  }
}

Metrics::~Metrics() = default;

void Metrics::record(Rpc rpc, grpc::StatusCode code, double seconds, std::uint64_t states) {
  const auto r = static_cast<std::size_t>(rpc);
  const auto c = static_cast<std::size_t>(code);
  requests_[r][c <= 16 ? c : 2]->Increment();  // 2: UNKNOWN
  latency_[r]->Observe(seconds);
  if (states) states_[r]->Increment(static_cast<double>(states));
}

void Metrics::callStarted(Rpc rpc) { inflight_[static_cast<std::size_t>(rpc)]->Increment(); }
void Metrics::callEnded(Rpc rpc) { inflight_[static_cast<std::size_t>(rpc)]->Decrement(); }

int Metrics::serve(const std::string& address, const MetricsHttp& http) {
  http_ = std::make_unique<MetricsHttpServer>(address, http, [this] { return text(); });
  return http_->port();
}

void Metrics::stopServing() { http_.reset(); }

std::string Metrics::text() const {
  std::vector<prometheus::MetricFamily> families = registry_->Collect();
  for (auto& f : models_->Collect()) families.push_back(std::move(f));
  for (auto& f : log_->Collect()) families.push_back(std::move(f));
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace denoc::server
