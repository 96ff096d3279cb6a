#include "options.hpp"

#include <CLI/CLI.hpp>
#include <sstream>

namespace denoc::server {

std::string ServerOptions::describe() const {
  std::ostringstream os;
  os << "listen=" << listen << " port_file=" << (port_file.empty() ? "-" : port_file)
     << " store_dir=" << store_dir << " examples=" << (examples ? "on" : "off") << " preload=[";
  for (std::size_t i = 0; i < preload.size(); ++i) os << (i ? "," : "") << preload[i];
  os << "] threads=" << threads << " max_dof=" << max_dof << " max_states=" << max_states
     << " max_message_bytes=" << max_message_bytes << " max_models=" << max_models
     << " workspaces_per_thread=" << workspaces_per_thread << " shutdown_grace_ms=" << shutdown_grace_ms
     << " drain_timeout_ms=" << drain_timeout_ms << " log_level=" << log_level;
  return os.str();
}

bool parseOptions(int argc, char** argv, ServerOptions& o, int& exit_code) {
  CLI::App app{"denocd: the denoc rigid-body dynamics gRPC service"};
  app.option_defaults()->multi_option_policy(
      CLI::MultiOptionPolicy::TakeLast);  // a repeated flag: the last wins
  app.add_option("--listen", o.listen, "host:port to listen on (port 0: a free port)")
      ->envname("DENOC_LISTEN");
  app.add_option("--port-file", o.port_file, "write the port listened on to this file")
      ->envname("DENOC_PORT_FILE");
  app.add_option("--store-dir", o.store_dir, "model store directory (created if missing)")
      ->envname("DENOC_STORE_DIR");
  app.add_option("--preload", o.preload, "URDF files (FILE or FILE@TIP_LINK) to register and pin at start")
      ->envname("DENOC_PRELOAD")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->delimiter(',');
  app.add_option("--examples", o.examples, "preload the built-in example models (true/false)")
      ->envname("DENOC_EXAMPLES");
  app.add_option("--threads", o.threads, "maximum threads of the server's pool")
      ->envname("DENOC_THREADS")
      ->check(CLI::Range(2, 4096));
  app.add_option("--max-dof", o.max_dof, "largest model (joints)")
      ->envname("DENOC_MAX_DOF")
      ->check(CLI::Range(1, 100000));
  app.add_option("--max-states", o.max_states, "most states per request")
      ->envname("DENOC_MAX_STATES")
      ->check(CLI::Range(1u, 100000000u));
  app.add_option("--max-message-bytes", o.max_message_bytes, "largest request or response message")
      ->envname("DENOC_MAX_MESSAGE_BYTES")
      ->check(CLI::Range(std::size_t{1024}, std::size_t{2147483647}));
  app.add_option("--max-models", o.max_models, "models held in memory (least recently used evicted)")
      ->envname("DENOC_MAX_MODELS")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000000}));
  app.add_option("--workspaces-per-thread", o.workspaces_per_thread, "workspaces cached per server thread")
      ->envname("DENOC_WORKSPACES_PER_THREAD")
      ->check(CLI::Range(std::size_t{1}, std::size_t{4096}));
  app.add_option("--shutdown-grace-ms", o.shutdown_grace_ms, "on SIGTERM, report NOT_SERVING this long first")
      ->envname("DENOC_SHUTDOWN_GRACE_MS")
      ->check(CLI::Range(0, 600000));
  app.add_option("--drain-timeout-ms", o.drain_timeout_ms, "then let calls in flight finish this long")
      ->envname("DENOC_DRAIN_TIMEOUT_MS")
      ->check(CLI::Range(0, 600000));
  app.add_option("--log-level", o.log_level, "trace, debug, info, warn, error")
      ->envname("DENOC_LOG_LEVEL")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    exit_code = app.exit(e);
    return false;
  }
  return true;
}

}  // namespace denoc::server
