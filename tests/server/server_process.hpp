// Test support: real denocd processes on 127.0.0.1 (posix_spawn, a port file, a temporary store directory)
// and small gRPC helpers. Every wait is bounded in time.
#pragma once

#include <fcntl.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "denoc/v1/dynamics.grpc.pb.h"

extern char** environ;

namespace denoc::test {

// An idle gRPC C++ client notices a server's GOAWAY only at its backup poll (every 5 s by default), and a
// draining server waits for its connections to close: poll often so that shutdown tests take milliseconds.
// Set before gRPC initialises (static initialisation, before main).
inline const bool kFastBackupPoll = ::setenv("GRPC_CLIENT_CHANNEL_BACKUP_POLL_INTERVAL_MS", "50", 0) == 0;

namespace fs = std::filesystem;
using namespace std::chrono_literals;

/// Whether a denocd's resident size means what it means in a release build. Under AddressSanitizer the
/// quarantine holds freed blocks (up to 256 MiB) and shadow memory grows with every allocation, so the tests'
/// resident-size bounds are asserted in the release build only (the rest of each such test runs in both).
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kResidentSizeBounded = false;
#else
inline constexpr bool kResidentSizeBounded = true;
#endif

/// Whether cond() becomes true within `timeout` (asked every 5 ms).
template <typename F>
bool eventually(F cond, std::chrono::milliseconds timeout = 60s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return cond();
}

/// K of "stopped after K of N states" in a server's log (the last such line), or -1.
inline long long stoppedAfter(const std::string& log) {
  static const std::regex re("stopped after ([0-9]+) of ([0-9]+) states");
  long long k = -1;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), re); it != std::sregex_iterator(); ++it)
    k = std::stoll((*it)[1]);
  return k;
}

/// A fresh temporary directory, removed with the object.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "denoc_server_test.XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  std::string str(const std::string& sub = "") const {
    return sub.empty() ? path_.string() : (path_ / sub).string();
  }

 private:
  fs::path path_;
};

inline std::string readText(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

/// Turns a store directory back into the unversioned layout of servers before record formats had
/// directories (docs/service.md, "Store"): every entry of <store>/v1 (records, tombstones, anything) moved
/// into <store> itself, and v1 removed. Returns how many entries were moved.
inline std::size_t unversionStore(const fs::path& store) {
  std::size_t moved = 0;
  for (const auto& e : fs::directory_iterator(store / "v1")) {
    fs::rename(e.path(), store / e.path().filename());
    ++moved;
  }
  fs::remove(store / "v1");
  return moved;
}

/// How the test's own channel to a server is made: plaintext by default; for a TLS server, its credentials
/// and the name its certificate carries. A wrapper command, when given, starts denocd (its arguments
/// follow the wrapper's), e.g. in a mount namespace of its own; it must exec denocd in the same process.
struct ChannelSetup {
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  std::string tls_name;  // SSL target name override ("localhost")
  std::vector<std::string> wrapper;
};

/// A channel to address with the given setup.
inline std::shared_ptr<grpc::Channel> makeChannel(const std::string& address,
                                                  const ChannelSetup& setup = {}) {
  grpc::ChannelArguments args;
  if (!setup.tls_name.empty()) args.SetSslTargetNameOverride(setup.tls_name);
  return grpc::CreateCustomChannel(
      address, setup.credentials ? setup.credentials : grpc::InsecureChannelCredentials(), args);
}

/// One denocd process. The destructor kills it if it still runs.
class ServerProcess {
 public:
  /// Starts denocd with --listen 127.0.0.1:0 (unless extra gives --listen), --store-dir store, a port file
  /// and a log file in work_dir, plus extra arguments; waits (at most 30 s) until it listens and the test's
  /// channel (made with setup) connects.
  ServerProcess(const std::string& work_dir, const std::string& store, std::vector<std::string> extra = {},
                const std::string& tag = "server", const ChannelSetup& setup = {})
      : log_path_(work_dir + "/" + tag + ".log") {
    const std::string port_file = work_dir + "/" + tag + ".port";
    std::error_code ec;
    fs::remove(port_file, ec);
    std::vector<std::string> args = setup.wrapper;
    const std::vector<std::string> own = {
        DENOC_DENOCD, "--listen",           "127.0.0.1:0", "--port-file",
        port_file,    "--store-dir",        store,         "--shutdown-grace-ms",
        "0",          "--drain-timeout-ms", "5000"};
    args.insert(args.end(), own.begin(), own.end());
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    const int rc = setup.wrapper.empty()
                       ? posix_spawn(&pid_, DENOC_DENOCD, &actions, nullptr, argv.data(), environ)
                       : posix_spawnp(&pid_, args[0].c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error("posix_spawn denocd failed");
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        throw std::runtime_error("denocd exited at start; log:\n" + readText(log_path_));
      }
      std::ifstream f(port_file);
      if (f >> port_ && port_ > 0) break;
      std::this_thread::sleep_for(10ms);
    }
    if (port_ <= 0)
      throw std::runtime_error("denocd did not write its port file; log:\n" + readText(log_path_));
    channel_ = makeChannel(address(), setup);
    if (!channel_->WaitForConnected(std::chrono::system_clock::now() + 10s)) {
      throw std::runtime_error("cannot connect to denocd at " + address());
    }
  }

  ~ServerProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
  }

  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::shared_ptr<grpc::Channel> channel() const { return channel_; }
  std::unique_ptr<v1::Dynamics::Stub> stub() const { return v1::Dynamics::NewStub(channel_); }
  /// A stub on a channel of its own without gRPC's message-size limits (for batches beyond 4 MiB).
  std::unique_ptr<v1::Dynamics::Stub> unlimitedStub() const {
    grpc::ChannelArguments unlimited;
    unlimited.SetMaxReceiveMessageSize(-1);
    unlimited.SetMaxSendMessageSize(-1);
    return v1::Dynamics::NewStub(
        grpc::CreateCustomChannel(address(), grpc::InsecureChannelCredentials(), unlimited));
  }
  std::string log() const { return readText(log_path_); }

  void signal(int sig) const { ::kill(pid_, sig); }

  /// Waits (at most timeout) for the process to end; returns its wait status, or -1 on timeout.
  int wait(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return status;
      }
      std::this_thread::sleep_for(5ms);
    }
    return -1;
  }

 private:
  std::string log_path_;
  pid_t pid_ = -1;
  int port_ = 0;
  std::shared_ptr<grpc::Channel> channel_;
};

/// A client context with a deadline.
inline std::unique_ptr<grpc::ClientContext> context(std::chrono::milliseconds timeout = 30s) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + timeout);
  return ctx;
}

/// Whether a new connection made with `setup` gets a ListModels answered (a channel with a subchannel of its
/// own: a new TLS handshake, not a connection shared with another stub).
inline bool newConnectionServed(const std::string& address, const ChannelSetup& setup) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  if (!setup.tls_name.empty()) args.SetSslTargetNameOverride(setup.tls_name);
  auto stub = v1::Dynamics::NewStub(grpc::CreateCustomChannel(address, setup.credentials, args));
  v1::ListModelsResponse list;
  return stub->ListModels(context(5s).get(), {}, &list).ok();
}

/// The seconds until a new connection made with `setup` was served (`served` true) or refused (false), polled
/// every 200 ms, or a negative number when none was within `timeout`.
inline double secondsUntilServedIs(bool served, const std::string& address, const ChannelSetup& setup,
                                   std::chrono::seconds timeout) {
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < timeout) {
    if (newConnectionServed(address, setup) == served)
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::this_thread::sleep_for(200ms);
  }
  return -1;
}

inline double secondsUntilServed(const std::string& address, const ChannelSetup& setup,
                                 std::chrono::seconds timeout) {
  return secondsUntilServedIs(true, address, setup, timeout);
}

/// A unary call of `method` with `bytes` as its body, sent as they are (e.g. a message that does not parse).
inline grpc::Status rawCall(const std::shared_ptr<grpc::Channel>& channel, const std::string& method,
                            const std::string& bytes) {
  grpc::GenericStub stub(channel);
  grpc::Slice slice(bytes);
  const grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  auto ctx = context(10s);
  std::promise<grpc::Status> done;
  stub.UnaryCall(ctx.get(), method, grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status s) { done.set_value(std::move(s)); });
  return done.get_future().get();
}

}  // namespace denoc::test
