#include "log.hpp"

#include <google/protobuf/stubs/logging.h>
#include <grpc/support/log.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "errors.hpp"

namespace denoc::server {

namespace {

/// The escape of one byte (empty when it stays as it is).
std::string_view escapeOf(unsigned char c, char (&buf)[5]) {
  switch (c) {
    case '\n':
      return "\\n";
    case '\r':
      return "\\r";
    case '\t':
      return "\\t";
    default:
      break;
  }
  if (c >= 0x20 && c < 0x7f) return {};
  static constexpr char hex[] = "0123456789abcdef";
  buf[0] = '\\';
  buf[1] = 'x';
  buf[2] = hex[c >> 4];
  buf[3] = hex[c & 15];
  buf[4] = '\0';
  return {buf, 4};
}

/// Appends text escaped to out, at most max_chars characters; returns whether it was cut.
bool appendEscaped(std::string& out, std::string_view text, std::size_t max_chars) {
  std::size_t used = 0;
  for (const char ch : text) {
    char buf[5];
    const std::string_view e = escapeOf(static_cast<unsigned char>(ch), buf);
    const std::size_t width = e.empty() ? 1 : e.size();
    if (used + width > max_chars) return true;
    if (e.empty()) {
      out += ch;
    } else {
      out += e;
    }
    used += width;
  }
  return false;
}

}  // namespace

std::string escaped(std::string_view text, std::size_t max_chars) {
  std::string out;
  out.reserve(std::min(text.size(), max_chars) + 24);
  if (appendEscaped(out, text, max_chars)) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

std::string quoted(std::string_view text, std::size_t max_chars) {
  std::string out = "'";
  out.reserve(std::min(text.size(), max_chars) + 26);
  if (appendEscaped(out, text, max_chars)) {
    out += "...' (" + std::to_string(text.size()) + " bytes)";
  } else {
    out += '\'';
  }
  return out;
}

LogLimiter::LogLimiter(double per_second, double burst) : per_second_(per_second), burst_(burst) {}

LogLimiter::Verdict LogLimiter::admit(const Kind& kind, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  auto it = buckets_.find(kind);
  if (it == buckets_.end()) {
    const Kind& key = buckets_.size() < kMaxKinds ? kind : Kind{"other", "other"};
    it = buckets_.try_emplace(key, Bucket{burst_, now, 0, 0}).first;
  }
  Bucket& b = it->second;
  // refill: per_second tokens a second, at most burst
  const double elapsed = std::chrono::duration<double>(now - b.refilled).count();
  if (elapsed > 0) {
    b.tokens = std::min(burst_, b.tokens + elapsed * per_second_);
    b.refilled = now;
  }
  Verdict v;
  if (b.tokens >= 1.0) {
    b.tokens -= 1.0;
    v.log = true;
    v.held_back = b.pending;
    b.pending = 0;
  } else {
    v.starts_limiting = b.pending == 0;
    ++b.pending;
    ++b.total;
  }
  return v;
}

std::vector<std::pair<LogLimiter::Kind, std::uint64_t>> LogLimiter::heldBack() const {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<Kind, std::uint64_t>> out;
  out.reserve(buckets_.size());
  for (const auto& [kind, b] : buckets_) out.emplace_back(kind, b.total);
  return out;
}

LogLimiter& failedCallLog() {
  static LogLimiter limiter(2.0, 10.0);
  return limiter;
}

namespace {

/// One line of kind (a, b) through failedCallLog(): written at `level` as line() (made only then), ending in
/// how many of its kind were held back before it; or held back, the first of a burst saying so. `what` names
/// the lines in both ("failures", "lines").
template <typename Line>
void logLimited(const char* a, const char* b, const char* what, spdlog::level::level_enum level,
                Line&& line) {
  const LogLimiter::Verdict v = failedCallLog().admit({a, b});
  if (v.log) {
    spdlog::log(level, "{}{}", line(),
                v.held_back == 0 ? std::string()
                                 : " (" + std::to_string(v.held_back) + " more " + a + " " + b + " " + what +
                                       " were not logged)");
  } else if (v.starts_limiting) {
    spdlog::warn(
        "{} {} {}: more than {} in a burst; logging at most {} a second, the rest counted in "
        "denoc_log_lines_suppressed_total",
        a, b, what, static_cast<int>(failedCallLog().burst()), failedCallLog().perSecond());
  }
}

}  // namespace

void logFailedCall(const char* rpc, std::string_view peer, const grpc::Status& status) {
  const char* code = codeName(status.error_code());
  // the message is escaped already (toStatus); escaping again changes nothing but bounds it
  logLimited(rpc, code, "failures", spdlog::level::warn, [&] {
    return fmt::format("{} from {} failed: {}: {}", rpc, escaped(peer), code,
                       escaped(status.error_message(), 2048));
  });
}

namespace {

/// One library line through the limiter: written at `level`, or held back (and counted) as failed calls are.
void logLibraryLine(const char* library, const char* level_name, spdlog::level::level_enum level,
                    const char* file, int line, std::string_view text) {
  logLimited(library, level_name, "lines", level, [&] {
    return fmt::format("[{} {} {}:{}] {}", library, level_name, escaped(file ? file : "", 256), line,
                       escaped(text, 2048));
  });
}

void protobufLine(google::protobuf::LogLevel level, const char* file, int line, const std::string& text) {
  switch (level) {
    case google::protobuf::LOGLEVEL_INFO:
      return logLibraryLine("libprotobuf", "INFO", spdlog::level::info, file, line, text);
    case google::protobuf::LOGLEVEL_WARNING:
      return logLibraryLine("libprotobuf", "WARNING", spdlog::level::warn, file, line, text);
    case google::protobuf::LOGLEVEL_ERROR:
      return logLibraryLine("libprotobuf", "ERROR", spdlog::level::err, file, line, text);
    default:  // FATAL: libprotobuf aborts after it, so it is never held back
      spdlog::critical("[libprotobuf FATAL {}:{}] {}", escaped(file ? file : "", 256), line,
                       escaped(text, 2048));
  }
}

void grpcLine(gpr_log_func_args* args) {
  switch (args->severity) {
    case GPR_LOG_SEVERITY_DEBUG:
      return logLibraryLine("grpc", "DEBUG", spdlog::level::debug, args->file, args->line, args->message);
    case GPR_LOG_SEVERITY_INFO:
      return logLibraryLine("grpc", "INFO", spdlog::level::info, args->file, args->line, args->message);
    default:
      return logLibraryLine("grpc", "ERROR", spdlog::level::err, args->file, args->line, args->message);
  }
}

/// After the logger is gone (at exit): plain stderr.
void grpcStderrLine(gpr_log_func_args* args) {
  std::fprintf(stderr, "[grpc %s:%d] %s\n", args->file ? args->file : "", args->line,
               escaped(args->message ? args->message : "", 2048).c_str());
}

}  // namespace

void routeLibraryLogs() {
  google::protobuf::SetLogHandler(&protobufLine);
  gpr_set_log_function(&grpcLine);
}

void restoreLibraryLogs() {
  gpr_set_log_function(&grpcStderrLine);
  google::protobuf::SetLogHandler(nullptr);
}

}  // namespace denoc::server
