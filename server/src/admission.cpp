#include "admission.hpp"

#include "errors.hpp"

namespace denoc::server {

namespace {

[[noreturn]] void refuse(const std::string& who, std::uint64_t now, std::uint64_t amount, std::uint64_t limit,
                         const char* what, const char* flag) {
  fail(ErrorCode::ResourceExhausted, who + ": " + std::to_string(now) + " " + what + ", this call needs " +
                                         std::to_string(amount) + " more, the limit is " +
                                         std::to_string(limit) + " (" + flag + "); retry later");
}

}  // namespace

Admission::Ticket& Admission::Ticket::operator=(Ticket&& o) noexcept {
  if (this != &o) {
    reset();
    owner_ = o.owner_;
    entry_ = o.entry_;
    states_ = o.states_;
    streams_ = o.streams_;
    o.owner_ = nullptr;
  }
  return *this;
}

void Admission::Ticket::reset() {
  if (owner_) owner_->giveBack(entry_, states_, streams_);
  owner_ = nullptr;
}

Admission::Ticket Admission::admitStates(const std::string& principal, std::uint64_t states) {
  std::lock_guard lock(mutex_);
  const auto it = by_principal_.find(principal);
  const std::uint64_t mine = it == by_principal_.end() ? 0 : it->second.states;
  // the server's bound first (when it is reached, every principal waits); then the caller's share
  if (total_.states + states > bounds_.states) {
    refuse("server busy", total_.states, states, bounds_.states, "states in flight",
           "--max-inflight-states, DENOC_MAX_INFLIGHT_STATES");
  }
  if (mine + states > bounds_.principal_states) {
    refuse("server busy for principal '" + principal + "'", mine, states, bounds_.principal_states,
           "states in flight for it", "--principal-inflight-states, DENOC_PRINCIPAL_INFLIGHT_STATES");
  }
  auto& entry = it == by_principal_.end() ? *by_principal_.emplace(principal, Use{}).first : *it;
  entry.second.states += states;
  total_.states += states;
  return Ticket(this, &entry, states, 0);
}

Admission::Ticket Admission::admitStream(const std::string& principal) {
  std::lock_guard lock(mutex_);
  const auto it = by_principal_.find(principal);
  const std::uint64_t mine = it == by_principal_.end() ? 0 : it->second.streams;
  if (total_.streams + 1 > bounds_.streams) {
    refuse("server busy", total_.streams, 1, bounds_.streams, bounds_.streams_what, bounds_.streams_flag);
  }
  if (mine + 1 > bounds_.principal_streams) {
    refuse("server busy for principal '" + principal + "'", mine, 1, bounds_.principal_streams,
           (std::string(bounds_.streams_what) + " for it").c_str(), bounds_.principal_streams_flag);
  }
  auto& entry = it == by_principal_.end() ? *by_principal_.emplace(principal, Use{}).first : *it;
  entry.second.streams += 1;
  total_.streams += 1;
  return Ticket(this, &entry, 0, 1);
}

void Admission::giveBack(Principals::value_type* entry, std::uint64_t states, std::uint64_t streams) {
  std::lock_guard lock(mutex_);
  entry->second.states -= states;
  entry->second.streams -= streams;
  total_.states -= states;
  total_.streams -= streams;
  if (entry->second.states == 0 && entry->second.streams == 0)
    by_principal_.erase(by_principal_.find(entry->first));
}

std::uint64_t Admission::statesInFlight() const {
  std::lock_guard lock(mutex_);
  return total_.states;
}

std::uint64_t Admission::streamsOpen() const {
  std::lock_guard lock(mutex_);
  return total_.streams;
}

std::uint64_t Admission::statesOf(const std::string& principal) const {
  std::lock_guard lock(mutex_);
  const auto it = by_principal_.find(principal);
  return it == by_principal_.end() ? 0 : it->second.states;
}

std::uint64_t Admission::streamsOf(const std::string& principal) const {
  std::lock_guard lock(mutex_);
  const auto it = by_principal_.find(principal);
  return it == by_principal_.end() ? 0 : it->second.streams;
}

std::size_t Admission::principals() const {
  std::lock_guard lock(mutex_);
  return by_principal_.size();
}

}  // namespace denoc::server
