// Failed calls: the status-code names and denoc::client::Error.
#include "denoc/client/errors.hpp"

#include <cctype>
#include <string_view>
#include <utility>

#include "denoc/v1/status_name.hpp"

namespace denoc::client {

std::string codeName(grpc::StatusCode code) { return v1::statusName(code); }

bool wasDeleted(const std::string& message) {
  // the server's NOT_FOUND of a model with a tombstone: "model_id <id> was deleted (DeleteModel); ..."
  return message.find(" was deleted (DeleteModel)") != std::string::npos;
}

namespace {

// the GetServerInfo fields a client keeps (Client::maxStates)
constexpr std::string_view kCachedLimits[] = {"max_states"};

}  // namespace

bool namesCachedLimit(const Error& error) {
  if (error.code() != grpc::StatusCode::RESOURCE_EXHAUSTED) return false;
  // the server's refusals name the limit as the GetServerInfo field: "... more than the limit max_states = 7
  // (--max-states, DENOC_MAX_STATES)"; a whole word, so that no longer name containing it counts
  const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; };
  const std::string& m = error.message();
  for (const std::string_view name : kCachedLimits) {
    for (std::size_t at = m.find(name); at != std::string::npos; at = m.find(name, at + 1)) {
      const std::size_t end = at + name.size();
      if ((at == 0 || !word(m[at - 1])) && (end == m.size() || !word(m[end]))) return true;
    }
  }
  return false;
}

Error::Error(grpc::StatusCode code, std::string message, std::string call)
    : std::runtime_error((call.empty() ? std::string() : call + ": ") + codeName(code) + ": " + message),
      code_(code),
      message_(std::move(message)),
      call_(std::move(call)) {}

}  // namespace denoc::client
