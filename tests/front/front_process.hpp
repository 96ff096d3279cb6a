// Test support for the hardened front: a real nginx (Debian's binary) configured from deploy/nginx by
// deploy/nginx/render.sh in a temporary prefix, in front of a real denocd on a unix socket. Every wait is
// bounded in time.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server_process.hpp"

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

}  // namespace denoc::test
