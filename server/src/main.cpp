// denocd: the denoc dynamics service. See docs/service.md.
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <malloc.h>
#include <signal.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <thread>

#include "admission.hpp"
#include "auth.hpp"
#include "denoc/dh.hpp"
#include "denoc/version.hpp"
#include "errors.hpp"
#include "executor.hpp"
#include "log.hpp"
#include "metrics.hpp"
#include "options.hpp"
#include "reflection.hpp"
#include "registration.hpp"
#include "registry.hpp"
#include "service.hpp"
#include "store.hpp"
#include "store_record.hpp"
#include "transport.hpp"
#include "watchdog.hpp"

namespace ds = denoc::server;

namespace {

constexpr const char* kServiceName = "denoc.v1.Dynamics";

void writePortFile(const std::string& path, int port) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << port << "\n";
    f.flush();
    if (!f) throw std::runtime_error("cannot write the port file " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw std::runtime_error("cannot rename the port file to " + path);
}

int serve(const ds::ServerOptions& options) {
  const ds::Limits& limits = options.limits;
  ds::ModelStore store(options.models.store_dir);
  store.moveUnversioned();  // before anything is stored: a preloaded model's record would win over its own
  ds::Registry registry(store, options.models.max_models, limits, options.models.max_models_per_principal);

  // the built-in example models and the preloaded URDF files: pinned
  if (options.models.examples) {
    for (const denoc::DHSpec& dh : {denoc::stanfordArmDH(), denoc::planarArmDH()}) {
      auto entry = registry.add(ds::buildBuiltin(dh), nullptr, true).first;
      spdlog::info("example model {} ({} dof): {}", entry->info.name(), entry->info.dof(), entry->id);
    }
  }
  for (const std::string& entry_text : options.models.preload) {
    // FILE, FILE@TIP_LINK, each with #fixed, #floating or #planar for the root joint
    const std::size_t hash = entry_text.rfind('#');
    const std::string item = entry_text.substr(0, hash);
    const std::string root = hash == std::string::npos ? "fixed" : entry_text.substr(hash + 1);
    const std::size_t at = item.rfind('@');
    const std::string path = at == std::string::npos ? item : item.substr(0, at);
    denoc::v1::RegisterModelRequest request;
    if (root != "fixed" && root != "floating" && root != "planar") {
      spdlog::critical("cannot preload {}: root '{}' is not fixed, floating or planar", entry_text, root);
      return 1;
    }
    request.mutable_urdf()->set_root(root == "floating" ? denoc::v1::ROOT_JOINT_FLOATING
                                     : root == "planar" ? denoc::v1::ROOT_JOINT_PLANAR
                                                        : denoc::v1::ROOT_JOINT_FIXED);
    request.mutable_urdf()->set_text(ds::readFile(path));
    if (at != std::string::npos) request.mutable_urdf()->set_tip_link(item.substr(at + 1));
    try {
      ds::BuiltModel built = ds::buildFromRequest(request, limits);
      const std::string record = ds::storeRecord(request, "");
      auto entry = registry.add(std::move(built), &record, true).first;
      spdlog::info("preloaded {} ({}, {} dof): {}", path, entry->info.name(), entry->info.dof(), entry->id);
    } catch (const std::exception& e) {
      spdlog::critical("cannot preload {}: {}", path, e.what());
      return 1;
    }
  }
  const std::size_t loaded = registry.loadStore();
  spdlog::info("model store {}: {} models loaded ({} in memory)", store.dir(), loaded, registry.size());

  std::unique_ptr<ds::TokenAuth> auth;
  const ds::SecurityOptions& security = options.security;
  if (!security.token_file.empty()) {
    auth = std::make_unique<ds::TokenAuth>(ds::TokenAuth::fromFile(security.token_file));
    spdlog::info("access control on: {} bearer tokens from {}", auth->size(), security.token_file);
  }
  ds::Admission admission(ds::AdmissionBounds{options.inflightStates(), options.principalInflightStates(),
                                              options.admission.max_streams, options.principalStreams()});
  // the executor's gauges are read by scrapes: /metrics is served from after the executor is made until
  // before it goes (stopServing below); the metrics themselves outlive it (its last work records calls)
  const ds::ComputeExecutor* scraped_executor = nullptr;
  ds::ModelGauges gauges{[&registry] { return registry.size(); },
                         [&registry] { return registry.pinnedCount(); },
                         [&store] { return store.usage(); },
                         [&admission] { return admission.statesInFlight(); },
                         [&scraped_executor] { return scraped_executor->queued(); },
                         [&scraped_executor] { return scraped_executor->busy(); },
                         options.computeThreads()};
  ds::Metrics metrics(std::move(gauges));
  denoc::BatchPool pool(options.compute.batch_threads);
  spdlog::info("large batches split over {} threads", pool.threads());
  // every call's work runs on the compute executor; the watchdog ends streams that wait on their client
  // too long. Both outlive the server (declared before it): calls in flight finish on them while it drains.
  ds::ComputeExecutor executor(
      ds::ExecutorBounds{options.computeThreads(), options.compute.queue, options.principalQueue()});
  scraped_executor = &executor;
  struct StopScrapes {
    ds::Metrics& m;
    ~StopScrapes() { m.stopServing(); }
  } stop_scrapes{metrics};
  if (!options.metrics.listen.empty()) {
    const int metrics_port = metrics.serve(options.metrics.listen, options.metrics.http);
    if (!options.metrics.port_file.empty()) writePortFile(options.metrics.port_file, metrics_port);
    spdlog::info("metrics on {} (port {}) at /metrics", options.metrics.listen, metrics_port);
  }
  const ds::StreamTimeouts timeouts{std::chrono::milliseconds(options.streams.idle_timeout_ms),
                                    std::chrono::milliseconds(options.streams.write_stall_timeout_ms)};
  ds::Watchdog watchdog(ds::Watchdog::tickFor(timeouts.idle, timeouts.write_stall));
  ds::Handlers handlers(registry, limits, admission, &pool);
  const ds::Credentials creds = ds::makeCredentials(options, auth.get());
  ds::ServiceContext context{
      handlers, executor, admission, watchdog, ds::Identity{auth.get(), security.trusted_front_header},
      timeouts, &metrics};
  ds::DynamicsService service(context);
  ds::ReflectionService reflection(context, {std::string(kServiceName), "grpc.health.v1.Health",
                                             "grpc.reflection.v1alpha.ServerReflection"});
  spdlog::info(
      "{} compute threads (queue {}), streams checked every {} ms{}", executor.threads(),
      options.compute.queue, watchdog.tick().count(),
      auth ? (creds.tokens_on_headers ? ", tokens checked on the headers"
                                      : ", tokens checked in the service (plaintext on a reachable address)")
           : "");
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(options.listen.address, creds.credentials, &port);
  grpc::ResourceQuota quota("denocd");
  ds::configureTransport(builder, options, quota);
  builder.RegisterService(&service);
  builder.RegisterService(&reflection);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    spdlog::critical(
        "cannot listen on {}: the address is in use (another denocd, or another program, on this "
        "port?) or not one of this machine's",
        options.listen.address);
    return 1;
  }
  auto* health = server->GetHealthCheckService();
  health->SetServingStatus(kServiceName, true);
  health->SetServingStatus(true);
  if (!options.listen.port_file.empty()) writePortFile(options.listen.port_file, port);
  spdlog::info("denocd listening on {} (port {}, {}), SERVING", options.listen.address, port, creds.kind);
  if (security.trusted_front_header)
    spdlog::info("callers without a token are named by the front's identity headers (x-denoc-client-*)");

  // SIGHUP: the token file read again (a rotated token); SIGTERM / SIGINT: NOT_SERVING, a grace period for
  // load balancers to notice, then drain calls in flight
  std::thread signals([&] {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    int sig = 0;
    for (;;) {
      sigwait(&set, &sig);
      if (sig != SIGHUP) break;
      if (!auth) {
        spdlog::info("SIGHUP received: no token file to read again");
        continue;
      }
      try {
        auth->replace(ds::TokenAuth::fromFile(security.token_file));
        spdlog::info("SIGHUP received: {} bearer tokens read again from {}", auth->size(),
                     security.token_file);
      } catch (const std::exception& e) {
        spdlog::error("SIGHUP received: kept the {} bearer tokens in use: {}", auth->size(), e.what());
      }
    }
    spdlog::info("{} received: NOT_SERVING, draining in {} ms (deadline {} ms)",
                 sig == SIGTERM ? "SIGTERM" : "SIGINT", options.shutdown.grace_ms,
                 options.shutdown.drain_timeout_ms);
    health->SetServingStatus(kServiceName, false);
    health->SetServingStatus(false);
    std::this_thread::sleep_for(std::chrono::milliseconds(options.shutdown.grace_ms));
    server->Shutdown(std::chrono::system_clock::now() +
                     std::chrono::milliseconds(options.shutdown.drain_timeout_ms));
  });
  server->Wait();
  signals.join();
  spdlog::info("denocd stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // block the shutdown signals in every thread (gRPC's included); one thread waits for them
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);

  ds::ServerOptions options;
  int exit_code = 0;
  if (!ds::parseOptions(argc, argv, options, exit_code)) return exit_code;
  // Transparent huge pages off for this process, whatever the host's setting. With THP "always" and a
  // kernel that does not exempt thread stacks (older kernels do not), each thread's stack and each
  // allocator arena fills whole 2 MiB pages: on such a machine a test's denocd started at 93 MiB (22 MiB
  // where THP is "madvise") and grew by 627 MiB under a rapid-reset burst that grows it by 20-30 MiB here.
  // The service's memory bounds assume 4 KiB pages; its working sets are far below a huge page.
  if (::prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0) std::perror("denocd: prctl(PR_SET_THP_DISABLE)");
  // At most as many allocator arenas as compute threads (2..8), instead of glibc's 8 per core: with
  // --heap-keep-mb kept per arena, this bounds the freed memory held after a burst
  mallopt(M_ARENA_MAX, static_cast<int>(std::clamp(options.computeThreads(), 2u, 8u)));
  if (options.compute.heap_keep_mb > 0) {
    // A batch of 10^4 7-DOF states is a 1.7 MB request and a 0.6 MB answer. By default glibc maps blocks
    // that large with mmap and unmaps them when freed, so every call faults in fresh zeroed pages (a
    // third of the server's time on such batches); kept in the heap, they are reused. The trim threshold
    // bounds the freed memory an arena keeps.
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, static_cast<int>(options.compute.heap_keep_mb) << 20);  // at most 2047 MiB
  }
  auto logger = spdlog::stderr_color_mt("denocd");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(options.log_level));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ [%t] %v");
  ds::routeLibraryLogs();
  spdlog::info("denocd {} starting: {}", DENOC_VERSION_STRING, options.describe());
  int code = 1;
  try {
    code = serve(options);
  } catch (const std::exception& e) {
    spdlog::critical("denocd: {}", e.what());
  }
  ds::restoreLibraryLogs();
  return code;
}
