// Test support for the hardened front: a real nginx (Debian's binary) configured from deploy/nginx by
// deploy/nginx/render.sh in a temporary prefix, in front of a real denocd on a unix socket. Every wait is
// bounded in time.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server_process.hpp"
#include "tls_material.hpp"

namespace denoc::test {

/// A free TCP port on 127.0.0.1 (bound, read and released: another process could take it meanwhile).
inline int freePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw std::runtime_error("cannot find a free port");
  ::close(fd);
  return ntohs(a.sin_port);
}

/// A child process (argv[0] a path) in a process group of its own, stdout and stderr into log; the group is
/// killed (SIGKILL) with the object, so that no process it started (nginx's workers) outlives the test.
class Child {
 public:
  Child(std::vector<std::string> args, const std::string& log) : log_(log) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    // a process group of its own: the destructor ends the child's children too (nginx's workers)
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    const int rc = posix_spawn(&pid_, args[0].c_str(), &actions, &attr, argv.data(), environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error("cannot start " + args[0]);
  }
  ~Child() {
    if (pid_ > 0) {
      ::kill(-pid_, SIGKILL);  // the whole group: nginx's master and workers
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  pid_t pid() const { return pid_; }
  /// Whether the process still runs (not exited, not a zombie).
  bool alive() {
    int status = 0;
    if (pid_ <= 0) return false;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    return true;
  }
  std::string log() const { return readText(log_); }

 private:
  std::string log_;
  pid_t pid_ = -1;
};

/// Waits (at most timeout) until channel connects.
inline bool connects(const std::shared_ptr<grpc::Channel>& channel, std::chrono::seconds timeout) {
  return channel->WaitForConnected(std::chrono::system_clock::now() + timeout);
}

/// A front (or the L7 balancer) as the image runs it: deploy/nginx/render.sh writes its configuration into
/// `prefix` with `render_args` (the site, ports, certificates), then deploy/nginx/front.sh runs nginx there,
/// looking every second at the files in `watch` (space-separated) and reloading nginx when they change.
/// Throws when render.sh fails.
inline std::unique_ptr<Child> startFront(const std::string& prefix, std::string render_args,
                                         const std::string& watch, const std::string& log) {
  std::string render = std::string("bash ") + DENOC_SOURCE_DIR + "/deploy/nginx/render.sh " + prefix + " " +
                       render_args + " --workers 1 --access-log " + prefix + "/access.log";
  if (::geteuid() == 0) render += " --user root";  // workers that may use root's socket
  if (std::system(render.c_str()) != 0) throw std::runtime_error("render.sh failed: " + render);
  // the environment front.sh reads (the test's own: Child passes it on)
  const std::string nginx_dir = fs::path(DENOC_NGINX).parent_path().string();
  const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";
  if (path.find(nginx_dir) == std::string::npos) ::setenv("PATH", (nginx_dir + ":" + path).c_str(), 1);
  ::setenv("DENOC_FRONT_PREFIX", (prefix + "/").c_str(), 1);
  ::setenv("DENOC_FRONT_CONF", "nginx.conf", 1);
  ::setenv("DENOC_FRONT_WATCH", watch.c_str(), 1);
  ::setenv("DENOC_FRONT_RELOAD_S", "1", 1);
  return std::make_unique<Child>(
      std::vector<std::string>{"/bin/sh", std::string(DENOC_SOURCE_DIR) + "/deploy/nginx/front.sh"}, log);
}

/// The calls a front has passed on so far: the lines of its access log (one per call).
inline int callsLogged(const std::string& prefix) {
  std::ifstream f(prefix + "/access.log");
  int lines = 0;
  for (std::string line; std::getline(f, line);) ++lines;
  return lines;
}

/// A mutual-TLS channel with a connection of its own to a front on 127.0.0.1:port, trusting `ca` for the
/// name localhost and presenting cert/key.
inline std::shared_ptr<grpc::Channel> frontChannel(int port, const std::string& ca, const std::string& cert,
                                                   const std::string& key) {
  grpc::ChannelArguments args;
  args.SetSslTargetNameOverride("localhost");
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(port),
                                   TlsMaterial::credentials(ca, cert, key), args);
}

}  // namespace denoc::test
