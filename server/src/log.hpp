// Log hygiene of denocd: client-controlled text (model ids, model, joint and link names, file names, peers)
// made safe for one log line or an error message, and failed calls logged with a rate limit per kind so
// that a client sending bad requests in a loop cannot fill the disk (docs/service.md, "Logs").
#pragma once

#include <grpcpp/support/status.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace denoc::server {

/// Characters of escaped text kept by default when a name is echoed.
inline constexpr std::size_t kEchoChars = 96;

/// text as printable ASCII on one line: bytes 0x20..0x7e stay, \n \r \t become those two-character escapes,
/// every other byte (control characters, ESC, DEL, bytes of non-ASCII characters) becomes \xHH. At most
/// max_chars characters of output are kept (never half an escape); a cut text ends in "... (N bytes)"
/// with N its full length. Text already escaped passes through unchanged.
std::string escaped(std::string_view text, std::size_t max_chars = kEchoChars);

/// escaped() in single quotes, for a name inside a message: 'panda_link1', or 'aaaa...' (4096 bytes).
std::string quoted(std::string_view text, std::size_t max_chars = kEchoChars);

/// A token bucket per kind of log line: up to `burst` lines at once, then `per_second` lines per second.
/// Thread-safe. Kinds are few and named by the server's code (an RPC and a status code), never by a client.
class LogLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  using Kind = std::pair<std::string, std::string>;  // (rpc, status code name)

  LogLimiter(double per_second, double burst);

  /// What to do with one line of a kind.
  struct Verdict {
    bool log = false;              // write it
    bool starts_limiting = false;  // not written, and the first line of this kind held back since the last
    std::uint64_t held_back = 0;   // when written: lines of this kind held back since the last one written
  };
  Verdict admit(const Kind& kind, Clock::time_point now = Clock::now());

  /// Lines held back so far, by kind (for the metrics).
  std::vector<std::pair<Kind, std::uint64_t>> heldBack() const;

  double perSecond() const { return per_second_; }
  double burst() const { return burst_; }

 private:
  struct Bucket {
    double tokens = 0;
    Clock::time_point refilled;
    std::uint64_t pending = 0;  // held back since the last line written
    std::uint64_t total = 0;    // held back ever
  };
  static constexpr std::size_t kMaxKinds = 1024;  // beyond: one shared bucket

  double per_second_;
  double burst_;
  mutable std::mutex mutex_;
  std::map<Kind, Bucket> buckets_;
};

/// The limiter of failed-call lines: 10 at once, then 2 per second, per (RPC, status code).
LogLimiter& failedCallLog();

/// Logs a failed call at warn through failedCallLog(): "RegisterModel from ipv4:127.0.0.1:4242 failed:
/// INVALID_ARGUMENT: <message>", peer and message escaped. When a kind's lines start being held back, one
/// line says so; the next line written of that kind says how many were held back. The count is also in
/// the metric denoc_log_lines_suppressed_total{rpc,code}.
void logFailedCall(const char* rpc, std::string_view peer, const grpc::Status& status);

/// Sends the libraries' own log lines (libprotobuf's, e.g. a request string that is not UTF-8, and gRPC's)
/// through spdlog and failedCallLog(), kind ("libprotobuf" or "grpc", level): a client repeating a bad
/// request cannot make them fill the disk. Their text is escaped and bounded. Call once at start, before
/// any thread logs; restoreLibraryLogs() before the logger goes away.
void routeLibraryLogs();
void restoreLibraryLogs();

}  // namespace denoc::server
