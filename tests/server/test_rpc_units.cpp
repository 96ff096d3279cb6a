// Units of denocd's RPC layer that need no gRPC: admission (global and per-principal bounds), the compute
// executor (bounded queues, principals served in turn), the stream watchdog (reference-counted checks) and
// the bearer-token checks, each also from many threads at once. No gRPC is linked, so the ThreadSanitizer
// preset runs this binary (label "units", which tests/sanitize.sh tsan does not exclude).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "admission.hpp"
#include "auth.hpp"
#include "errors.hpp"
#include "executor.hpp"
#include "watchdog.hpp"

namespace denoc::server {
namespace {

using namespace std::chrono_literals;

/// The message of the RequestError `f` throws (fails the test if it throws nothing or something else).
template <typename F>
std::string refusal(F&& f, ErrorCode code = ErrorCode::ResourceExhausted) {
  try {
    f();
  } catch (const RequestError& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "not refused";
  return {};
}

/// Blocks the threads that wait on it until opened.
class Gate {
 public:
  void wait() {
    std::unique_lock lock(m_);
    cv_.wait(lock, [this] { return open_; });
  }
  void open() {
    {
      std::lock_guard lock(m_);
      open_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool open_ = false;
};

/// Polls cond for at most timeout.
template <typename F>
bool eventually(F cond, std::chrono::milliseconds timeout = 10s) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(1ms);
  }
  return cond();
}

// ----------------------------------------------------------------------------------------------- admission

TEST(Admission, GlobalAndPrincipalBoundsNameTheirFlagsAndGiveBack) {
  Admission a(AdmissionBounds{100, 60, 3, 2});
  {
    auto t1 = a.admitStates("alice", 60);
    EXPECT_EQ(a.statesOf("alice"), 60u);
    // alice's share is used up; the refusal names her bound
    const std::string mine = refusal([&] { a.admitStates("alice", 1); });
    EXPECT_NE(mine.find("principal 'alice'"), std::string::npos) << mine;
    EXPECT_NE(mine.find("--principal-inflight-states"), std::string::npos) << mine;
    // bob may use the rest of the server, not more
    auto t2 = a.admitStates("bob", 40);
    const std::string busy = refusal([&] { a.admitStates("carol", 1); });
    EXPECT_NE(busy.find("server busy: 100 states in flight"), std::string::npos) << busy;
    EXPECT_NE(busy.find("--max-inflight-states"), std::string::npos) << busy;
    EXPECT_EQ(a.statesInFlight(), 100u);
    // streams, the same way
    auto s1 = a.admitStream("alice");
    auto s2 = a.admitStream("alice");
    EXPECT_NE(refusal([&] { a.admitStream("alice"); }).find("--principal-streams"), std::string::npos);
    auto s3 = a.admitStream("bob");
    EXPECT_NE(refusal([&] { a.admitStream("bob"); }).find("--max-streams"), std::string::npos);
    EXPECT_EQ(a.streamsOpen(), 3u);
    EXPECT_EQ(a.principals(), 2u);
  }
  EXPECT_EQ(a.statesInFlight(), 0u);
  EXPECT_EQ(a.streamsOpen(), 0u);
  EXPECT_EQ(a.principals(), 0u);  // nothing kept for principals that hold nothing
  // more than a share at once is never admitted, and leaves nothing behind
  EXPECT_NE(refusal([&] { a.admitStates("alice", 61); }).find("needs 61 more"), std::string::npos);
  EXPECT_EQ(a.principals(), 0u);
}

TEST(Admission, TicketsMoveAndResetOnce) {
  Admission a(AdmissionBounds{10, 10, 2, 2});
  Admission::Ticket t = a.admitStates("p", 4);
  Admission::Ticket u = std::move(t);
  EXPECT_EQ(a.statesInFlight(), 4u);
  t = a.admitStates("p", 3);
  EXPECT_EQ(a.statesInFlight(), 7u);
  t = std::move(u);  // gives back the 3, keeps the 4
  EXPECT_EQ(a.statesInFlight(), 4u);
  t.reset();
  t.reset();
  EXPECT_EQ(a.statesInFlight(), 0u);
}

TEST(Admission, ManyThreadsNeverExceedAnyBound) {
  constexpr std::uint64_t kTotal = 1000, kShare = 400;
  Admission a(AdmissionBounds{kTotal, kShare, 12, 5});
  const std::vector<std::string> who = {"alice", "bob", "carol"};
  // what the test itself sees held (incremented after an admission, decremented before the ticket goes:
  // never above what the admission counts)
  std::atomic<std::uint64_t> held{0}, peak{0};
  std::vector<std::atomic<std::uint64_t>> held_by(3), peak_by(3);
  std::atomic<std::uint64_t> streams{0}, stream_peak{0};
  std::atomic<std::uint64_t> admitted{0}, refused{0};
  auto raise = [](std::atomic<std::uint64_t>& peak_value, std::uint64_t v) {
    std::uint64_t p = peak_value.load();
    while (v > p && !peak_value.compare_exchange_weak(p, v)) {
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      for (int i = 0; i < 4000; ++i) {
        const std::size_t p = rng() % 3;
        const std::uint64_t amount = 1 + rng() % 150;
        try {
          Admission::Ticket ticket = a.admitStates(who[p], amount);
          raise(peak, held += amount);
          raise(peak_by[p], held_by[p] += amount);
          Admission::Ticket stream;
          if (i % 7 == 0) {
            try {
              stream = a.admitStream(who[p]);
              raise(stream_peak, ++streams);
              --streams;
            } catch (const RequestError&) {
            }
          }
          held_by[p] -= amount;
          held -= amount;
          ++admitted;
        } catch (const RequestError& e) {
          ASSERT_EQ(e.code(), ErrorCode::ResourceExhausted);
          ++refused;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_LE(peak.load(), kTotal);
  for (std::size_t p = 0; p < 3; ++p) EXPECT_LE(peak_by[p].load(), kShare) << who[p];
  EXPECT_LE(stream_peak.load(), 12u);
  EXPECT_GT(admitted.load(), 0u);
  EXPECT_EQ(admitted.load() + refused.load(), 8u * 4000u);
  EXPECT_EQ(a.statesInFlight(), 0u);
  EXPECT_EQ(a.streamsOpen(), 0u);
  EXPECT_EQ(a.principals(), 0u);
}

// ------------------------------------------------------------------------------------------------ executor

TEST(ComputeExecutor, RunsEveryPieceOfWorkOnceFromManyThreads) {
  ComputeExecutor ex(ExecutorBounds{3, 1000000, 1000000});
  EXPECT_EQ(ex.threads(), 3u);
  constexpr int kThreads = 6, kEach = 3000;
  std::vector<std::atomic<int>> runs(kThreads * kEach);
  std::vector<std::thread> submitters;
  for (int t = 0; t < kThreads; ++t) {
    submitters.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const int id = t * kEach + i;
        if (i % 2)
          ex.submit("p" + std::to_string(t % 3), [&runs, id] { ++runs[static_cast<std::size_t>(id)]; });
        else
          ex.submitStep("p" + std::to_string(t % 3), [&runs, id] { ++runs[static_cast<std::size_t>(id)]; });
      }
    });
  }
  for (auto& th : submitters) th.join();
  ASSERT_TRUE(eventually([&] {
    for (auto& r : runs)
      if (r.load() == 0) return false;
    return true;
  }));
  for (std::size_t i = 0; i < runs.size(); ++i) ASSERT_EQ(runs[i].load(), 1) << "work " << i;
  EXPECT_EQ(ex.waiting(), 0u);
}

TEST(ComputeExecutor, QueuesAreBoundedInAllAndPerPrincipalButStreamStepsAreNot) {
  ComputeExecutor ex(ExecutorBounds{1, 4, 3});
  Gate gate;
  std::atomic<int> done{0};
  ex.submit("blocker", [&] {
    gate.wait();
    ++done;
  });
  ASSERT_TRUE(eventually([&] { return ex.waiting() == 0; }));  // the one thread holds it
  for (int i = 0; i < 3; ++i) ex.submit("alice", [&] { ++done; });
  const std::string mine = refusal([&] { ex.submit("alice", [&] { ++done; }); });
  EXPECT_NE(mine.find("principal 'alice': 3 of its calls wait"), std::string::npos) << mine;
  EXPECT_NE(mine.find("--principal-queue"), std::string::npos) << mine;
  ex.submit("bob", [&] { ++done; });
  const std::string all = refusal([&] { ex.submit("carol", [&] { ++done; }); });
  EXPECT_NE(all.find("server busy: 4 calls wait"), std::string::npos) << all;
  EXPECT_NE(all.find("--compute-queue"), std::string::npos) << all;
  EXPECT_EQ(ex.waiting(), 4u);
  EXPECT_EQ(ex.waitingFor("alice"), 3u);
  // an open stream's next step is never refused, and does not count
  for (int i = 0; i < 10; ++i) ex.submitStep("alice", [&] { ++done; });
  EXPECT_EQ(ex.waiting(), 4u);
  gate.open();
  ASSERT_TRUE(eventually([&] { return done.load() == 1 + 4 + 10; }));
  EXPECT_EQ(ex.waiting(), 0u);
  EXPECT_EQ(ex.waitingFor("alice"), 0u);
  ex.submit("carol", [&] { ++done; });  // room again
  ASSERT_TRUE(eventually([&] { return done.load() == 16; }));
}

TEST(ComputeExecutor, PrincipalsAreServedInTurn) {
  ComputeExecutor ex(ExecutorBounds{1, 100, 100});
  Gate gate;
  std::mutex m;
  std::vector<std::string> order;
  auto record = [&](std::string what) {
    return [&, what] {
      std::lock_guard lock(m);
      order.push_back(what);
    };
  };
  ex.submit("blocker", [&] { gate.wait(); });
  ASSERT_TRUE(eventually([&] { return ex.waiting() == 0; }));
  for (int i = 0; i < 10; ++i) ex.submit("alice", record("a" + std::to_string(i)));
  ex.submit("bob", record("b0"));
  ex.submitStep("carol", record("c0"));
  ex.submit("bob", record("b1"));
  gate.open();
  ASSERT_TRUE(eventually([&] {
    std::lock_guard lock(m);
    return order.size() == 13;
  }));
  // alice's burst came first, yet bob and carol are served after one of hers, not after all ten
  const std::vector<std::string> want = {"a0", "b0", "c0", "a1", "b1", "a2", "a3",
                                         "a4", "a5", "a6", "a7", "a8", "a9"};
  EXPECT_EQ(order, want);
}

TEST(ComputeExecutor, WorkThatThrowsIsDroppedAndTheThreadGoesOn) {
  ComputeExecutor ex(ExecutorBounds{1, 10, 10});
  std::atomic<int> after{0};
  ex.submit("p", [] { throw std::runtime_error("a bug"); });
  ex.submit("p", [&] { ++after; });
  ASSERT_TRUE(eventually([&] { return after.load() == 1; }));
}

TEST(ComputeExecutor, DestructionRunsWhatIsQueued) {
  std::atomic<int> ran{0};
  {
    ComputeExecutor ex(ExecutorBounds{1, 100, 100});
    Gate gate;
    ex.submit("p", [&] {
      gate.wait();
      ++ran;
    });
    for (int i = 0; i < 20; ++i) ex.submitStep("q", [&] { ++ran; });
    gate.open();
  }
  EXPECT_EQ(ran.load(), 21);
}

// ------------------------------------------------------------------------------------------------ watchdog

/// A watched object counting its checks, deleting itself through unref like a reactor.
class Probe final : public Watched {
 public:
  Probe(std::atomic<int>& alive, std::atomic<int>& checks) : alive_(alive), checks_(checks) { ++alive_; }
  ~Probe() override { --alive_; }
  void check(Clock::time_point) override {
    ++checks_;
    if (slow_) std::this_thread::sleep_for(20ms);
  }
  bool slow_ = false;

 private:
  std::atomic<int>& alive_;
  std::atomic<int>& checks_;
};

TEST(Watchdog, ChecksEveryObjectUntilItIsRemoved) {
  std::atomic<int> alive{0}, checks{0};
  Watchdog dog(5ms);
  auto* p = new Probe(alive, checks);
  dog.add(p);
  ASSERT_TRUE(eventually([&] { return checks.load() >= 5; }));
  dog.remove(p);
  p->unref();
  EXPECT_EQ(alive.load(), 0);
  const int seen = checks.load();
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(checks.load(), seen);
  EXPECT_EQ(dog.size(), 0u);
}

TEST(Watchdog, AnObjectReleasedDuringItsCheckIsDeletedAfterTheCheck) {
  std::atomic<int> alive{0}, checks{0};
  Watchdog dog(5ms);
  auto* p = new Probe(alive, checks);
  p->slow_ = true;
  dog.add(p);
  ASSERT_TRUE(eventually([&] { return checks.load() >= 1; }));  // a check is running, or has run
  dog.remove(p);
  p->unref();  // the owner lets go; a check in progress still holds it
  ASSERT_TRUE(eventually([&] { return alive.load() == 0; }));
}

TEST(Watchdog, ObjectsComingAndGoingFromManyThreads) {
  std::atomic<int> alive{0}, checks{0};
  {
    Watchdog dog(5ms);
    std::vector<std::thread> threads;
    for (int t = 0; t < 6; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < 300; ++i) {
          auto* p = new Probe(alive, checks);
          dog.add(p);
          if (i % 3 == 0) std::this_thread::sleep_for(1ms);
          dog.remove(p);
          p->unref();
        }
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(dog.size(), 0u);
  }
  EXPECT_EQ(alive.load(), 0);
  EXPECT_GT(checks.load(), 0);
}

TEST(Watchdog, TickIsAnEighthOfTheShortestLimitWithinBounds) {
  EXPECT_EQ(Watchdog::tickFor(30000ms, 10000ms), 500ms);
  EXPECT_EQ(Watchdog::tickFor(800ms, 2000ms), 100ms);
  EXPECT_EQ(Watchdog::tickFor(10ms, 10ms), 5ms);
}

// ------------------------------------------------------------------------------------------------- tokens

TEST(TokenChecks, EachWayOfFailingIsNamedAndTheTokenNeverShown) {
  const TokenAuth auth({{"alice", "s3cret-a"}, {"bob", "s3cret-b"}});
  const std::string_view good = "Bearer s3cret-a", basic = "Basic s3cret-a", unknown = "Bearer s3cret-x";
  EXPECT_EQ(authenticate(auth, &good), "alice");
  const std::string none = refusal([&] { authenticate(auth, nullptr); }, ErrorCode::Unauthenticated);
  EXPECT_NE(none.find("'authorization: Bearer <token>'"), std::string::npos) << none;
  const std::string scheme = refusal([&] { authenticate(auth, &basic); }, ErrorCode::Unauthenticated);
  EXPECT_NE(scheme.find("not of the form 'Bearer <token>'"), std::string::npos) << scheme;
  const std::string who = refusal([&] { authenticate(auth, &unknown); }, ErrorCode::Unauthenticated);
  EXPECT_NE(who.find("not known"), std::string::npos) << who;
  for (const std::string& m : {none, scheme, who}) EXPECT_EQ(m.find("s3cret"), std::string::npos) << m;
}

TEST(TokenChecks, HealthAndReflectionNeedNoToken) {
  EXPECT_FALSE(needsToken("/grpc.health.v1.Health/Check"));
  EXPECT_FALSE(needsToken("/grpc.health.v1.Health/Watch"));
  EXPECT_FALSE(needsToken("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"));
  EXPECT_TRUE(needsToken("/denoc.v1.Dynamics/InverseDynamics"));
  EXPECT_TRUE(needsToken("/grpc.health.v1.HealthX/Check"));
  EXPECT_TRUE(needsToken("/grpc.health.v1.Health"));  // not a method of the service
  EXPECT_TRUE(needsToken(""));
}

TEST(TokenChecks, OneTableCheckedFromManyThreads) {
  std::vector<std::pair<std::string, std::string>> tokens;
  for (int i = 0; i < 20; ++i) tokens.emplace_back("p" + std::to_string(i), "token-" + std::to_string(i));
  const TokenAuth auth(tokens);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const int k = (i * 7 + t) % 25;  // 20 known, 5 unknown
        const std::string header = "Bearer token-" + std::to_string(k);
        const std::string_view value = header;
        std::string got;
        try {
          got = authenticate(auth, &value);
        } catch (const RequestError&) {
          got = "-";
        }
        if (got != (k < 20 ? "p" + std::to_string(k) : std::string("-"))) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace denoc::server
