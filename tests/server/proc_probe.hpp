// What the transport and stream tests read off a running denocd: its resident size and thread count from
// /proc, and the raw HTTP/2 client server/tools/h2_probe.py run as a process (its JSON report parsed).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/run_process.hpp"

namespace denoc::test {

/// A field of /proc/<pid>/status in its unit (kB for VmRSS), or -1.
inline long procStatus(pid_t pid, const std::string& field) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return -1;
}

inline long rssKiB(pid_t pid) { return procStatus(pid, "VmRSS"); }
inline long threadCount(pid_t pid) { return procStatus(pid, "Threads"); }

#ifdef DENOC_PYTHON3
/// Runs h2_probe.py COMMAND --port PORT ARGS...; its JSON report (the last line of its output).
inline nlohmann::json h2Probe(const std::string& command, int port, const std::vector<std::string>& args,
                              const std::string& stem) {
  std::vector<std::string> all = {std::string(DENOC_SOURCE_DIR) + "/server/tools/h2_probe.py", command,
                                  "--port", std::to_string(port)};
  all.insert(all.end(), args.begin(), args.end());
  const auto r = denoc::testing::runProcess(DENOC_PYTHON3, all, stem);
  if (r.code != 0)
    throw std::runtime_error("h2_probe " + command + " failed (" + std::to_string(r.code) + "): " + r.err);
  std::string out = r.out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  const std::size_t line = out.rfind('\n');
  return nlohmann::json::parse(line == std::string::npos ? out : out.substr(line + 1));
}

/// h2_probe.py run in the background (a command that holds its connection: stall); killed with the object.
class BackgroundProbe {
 public:
  BackgroundProbe(const std::string& command, int port, const std::vector<std::string>& args,
                  const std::string& out)
      : out_(out) {
    std::vector<std::string> all = {DENOC_PYTHON3,
                                    std::string(DENOC_SOURCE_DIR) + "/server/tools/h2_probe.py", command,
                                    "--port", std::to_string(port)};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, (out_ + ".err").c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    const int rc = posix_spawn(&pid_, DENOC_PYTHON3, &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error("cannot start h2_probe " + command);
  }
  ~BackgroundProbe() { stop(); }
  /// Kills it (its connection closes).
  void stop() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
      pid_ = -1;
    }
  }
  BackgroundProbe(const BackgroundProbe&) = delete;
  BackgroundProbe& operator=(const BackgroundProbe&) = delete;
  /// What it printed so far.
  std::string output() const {
    std::ifstream f(out_);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }

 private:
  std::string out_;
  pid_t pid_ = -1;
};
#endif

/// The count of a grpc-status (or a reset code) in an h2_probe report section.
inline int countOf(const nlohmann::json& report, const char* section, int code) {
  const auto& m = report.at(section);
  const auto it = m.find(std::to_string(code));
  return it == m.end() ? 0 : it->get<int>();
}

}  // namespace denoc::test
