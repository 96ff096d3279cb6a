// StopCondition: deadline, cancellation callable polled at a bounded rate, shared by threads, Stopped.
// Oracle: the steady clock and the calls counted here.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "denoc/stop.hpp"

namespace {

using denoc::StopCondition;
using denoc::StopReason;

TEST(StopCondition, DefaultNeverStops) {
  const StopCondition stop;
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(stop.stopRequested());
  EXPECT_EQ(stop.reason(), StopReason::None);
}

TEST(StopCondition, PassedDeadlineStopsWithItsReason) {
  const StopCondition stop({}, StopCondition::Clock::now() - std::chrono::seconds(1));
  EXPECT_TRUE(stop.stopRequested());
  EXPECT_EQ(stop.reason(), StopReason::Deadline);
  try {
    stop.raise("inverseDynamicsBatch", 3, 10, "states");
    FAIL() << "raise returned";
  } catch (const denoc::Stopped& e) {
    EXPECT_EQ(e.reason(), StopReason::Deadline);
    EXPECT_EQ(e.done(), 3u);
    EXPECT_STREQ(e.what(), "inverseDynamicsBatch: stopped after 3 of 10 states: the deadline passed");
  }
}

TEST(StopCondition, CallableAskedAtMostOncePerInterval) {
  int asked = 0;
  const StopCondition stop([&] { return ++asked, false; }, StopCondition::Clock::time_point::max(),
                           std::chrono::hours(1));
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(stop.stopRequested());
  EXPECT_EQ(asked, 1);  // the first poll asks; the next hour's do not
}

TEST(StopCondition, CancelledStaysSet) {
  std::atomic<bool> cancel{false};
  const StopCondition stop([&] { return cancel.load(); }, StopCondition::Clock::time_point::max(),
                           std::chrono::nanoseconds(0));
  EXPECT_FALSE(stop.stopRequested());
  cancel = true;
  EXPECT_TRUE(stop.stopRequested());
  cancel = false;
  EXPECT_TRUE(stop.stopRequested());
  EXPECT_EQ(stop.reason(), StopReason::Cancelled);
}

TEST(StopCondition, ThreadsShareOnePoller) {
  std::atomic<int> asked{0};
  const StopCondition stop([&] { return asked.fetch_add(1) >= 0 && false; },
                           StopCondition::Clock::time_point::max(), std::chrono::hours(1));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) (void)stop.stopRequested();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(asked.load(), 1);
}

}  // namespace
