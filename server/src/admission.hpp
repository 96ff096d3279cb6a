// Admission control of denocd: bounds on the states being computed at once over all unary calls and on the
// streaming calls (Simulate, Stream) open at once, both for the whole server and for each principal (a
// token's name; without tokens the peer's address), so that one client cannot take all of the server. A
// call over a bound is refused at once with RESOURCE_EXHAUSTED naming the bound (its flag and variable),
// before any work; admitted work holds a ticket that gives its share back when the call ends, however it
// ends. Thread-safe; no gRPC.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

namespace denoc::server {

/// The bounds (ServerOptions: --max-inflight-states, --principal-inflight-states, --max-streams,
/// --principal-streams).
struct AdmissionBounds {
  std::uint64_t states = 800000;
  std::uint64_t principal_states = 400000;
  std::uint64_t streams = 64;
  std::uint64_t principal_streams = 32;
  // how a refusal names the stream bounds (what they count, and their flags)
  const char* streams_what = "streams open";
  const char* streams_flag = "--max-streams, DENOC_MAX_STREAMS";
  const char* principal_streams_flag = "--principal-streams, DENOC_PRINCIPAL_STREAMS";
};

class Admission {
  struct Use {
    std::uint64_t states = 0;
    std::uint64_t streams = 0;
  };
  using Principals = std::unordered_map<std::string, Use>;

 public:
  explicit Admission(const AdmissionBounds& bounds) : bounds_(bounds) {}
  Admission(const Admission&) = delete;
  Admission& operator=(const Admission&) = delete;

  /// Holds admitted work until destroyed (or reset).
  class Ticket {
   public:
    Ticket() = default;
    Ticket(Ticket&& o) noexcept
        : owner_(o.owner_), entry_(o.entry_), states_(o.states_), streams_(o.streams_) {
      o.owner_ = nullptr;
    }
    Ticket& operator=(Ticket&& o) noexcept;
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;
    ~Ticket() { reset(); }
    /// Gives the share back now.
    void reset();

   private:
    friend class Admission;
    Ticket(Admission* owner, Principals::value_type* entry, std::uint64_t states, std::uint64_t streams)
        : owner_(owner), entry_(entry), states_(states), streams_(streams) {}
    Admission* owner_ = nullptr;
    Principals::value_type* entry_ = nullptr;  // stable: the map's nodes do not move
    std::uint64_t states_ = 0;
    std::uint64_t streams_ = 0;
  };

  /// Admits a unary call of `states` states for `principal`, or throws RequestError(ResourceExhausted).
  Ticket admitStates(const std::string& principal, std::uint64_t states);

  /// Admits one streaming call for `principal`, or throws RequestError(ResourceExhausted).
  Ticket admitStream(const std::string& principal);

  std::uint64_t statesInFlight() const;
  std::uint64_t streamsOpen() const;
  /// What one principal holds now.
  std::uint64_t statesOf(const std::string& principal) const;
  std::uint64_t streamsOf(const std::string& principal) const;
  /// Principals holding anything now.
  std::size_t principals() const;

  const AdmissionBounds& bounds() const { return bounds_; }

 private:
  void giveBack(Principals::value_type* entry, std::uint64_t states, std::uint64_t streams);

  AdmissionBounds bounds_;
  mutable std::mutex mutex_;
  Principals by_principal_;  // an entry lives while some ticket of its principal does
  Use total_;
};

}  // namespace denoc::server
