// A registration stops part way when its call is cancelled or its deadline passes (buildFromRequest polls
// the core's stop condition through the pre-scan, the import and the build), and toStatus answers CANCELLED
// or DEADLINE_EXCEEDED: the same mapping a handler uses for every other exception. A model built again from
// the store on a cache miss polls the caller's stop condition too, and a stop is no verdict on the record.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <sstream>
#include <string>

#include "denoc/stop.hpp"
#include "errors.hpp"
#include "registration.hpp"

namespace denoc::server {
namespace {

// a valid 1-DOF URDF with n fixed links hanging from its moving link (about 200 bytes each)
v1::RegisterModelRequest longRegistration(int n) {
  std::ostringstream x;
  const char* inertial =
      "<inertial><mass value=\"1\"/><inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" iyy=\"0.01\" iyz=\"0\" "
      "izz=\"0.01\"/></inertial>";
  x << "<robot name=\"long\"><link name=\"base\"/><link name=\"m\">" << inertial << "</link>"
    << "<joint name=\"jm\" type=\"continuous\"><parent link=\"base\"/><child link=\"m\"/></joint>";
  for (int i = 0; i < n; ++i) {
    x << "<link name=\"f" << i << "\">" << inertial << "</link><joint name=\"jf" << i
      << "\" type=\"fixed\"><parent link=\"m\"/><child link=\"f" << i
      << "\"/><origin xyz=\"0 0 0.1\"/></joint>";
  }
  x << "</robot>";
  v1::RegisterModelRequest r;
  r.mutable_urdf()->set_text(x.str());
  return r;
}

grpc::Status statusOf(const std::function<void()>& f) {
  try {
    f();
  } catch (...) {
    return toStatus(std::current_exception());
  }
  return grpc::Status::OK;
}

TEST(RegistrationStop, CancelledPartWayIsCancelled) {
  const v1::RegisterModelRequest req = longRegistration(4000);
  const Limits limits;
  ASSERT_NO_THROW(buildFromRequest(req, limits));
  // the call is "cancelled" once the registration is under way: the callable says no at its first ask (at
  // the first poll) and yes at its second, which comes after at least 1 ms of work (it is asked at most once
  // per millisecond; the whole build of this request takes tens of milliseconds)
  std::atomic<int> asked{0};
  const StopCondition cancelled([&] { return ++asked >= 2; });
  const grpc::Status st = statusOf([&] { buildFromRequest(req, limits, &cancelled); });
  EXPECT_EQ(st.error_code(), grpc::StatusCode::CANCELLED) << st.error_message();
  EXPECT_NE(st.error_message().find("stopped after"), std::string::npos) << st.error_message();
  EXPECT_NE(st.error_message().find("cancelled"), std::string::npos) << st.error_message();
  EXPECT_EQ(asked.load(), 2);
}

TEST(RegistrationStop, PastDeadlineIsDeadlineExceeded) {
  const v1::RegisterModelRequest req = longRegistration(4000);
  const StopCondition late(nullptr, StopCondition::Clock::now() - std::chrono::seconds(1));
  const grpc::Status st = statusOf([&] { buildFromRequest(req, Limits{}, &late); });
  EXPECT_EQ(st.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << st.error_message();
  EXPECT_NE(st.error_message().find("the deadline passed"), std::string::npos) << st.error_message();
  // a DH registration polls too
  v1::RegisterModelRequest dh;
  for (int i = 0; i < 6; ++i) {
    v1::DHLink* l = dh.mutable_dh()->add_links();
    l->set_type(v1::JOINT_TYPE_REVOLUTE);
    l->set_a(0.1);
    l->set_mass(1.0);
    l->mutable_inertia()->set_ixx(0.01);
    l->mutable_inertia()->set_iyy(0.01);
    l->mutable_inertia()->set_izz(0.01);
  }
  ASSERT_NO_THROW(buildFromRequest(dh, Limits{}));
  const StopCondition cancelled_at_once([] { return true; });
  const grpc::Status dst = statusOf([&] { buildFromRequest(dh, Limits{}, &cancelled_at_once); });
  EXPECT_EQ(dst.error_code(), grpc::StatusCode::CANCELLED) << dst.error_message();
  EXPECT_NE(dst.error_message().find("specFromDH: stopped after 0 of 6 links"), std::string::npos)
      << dst.error_message();
}

TEST(RegistrationStop, ADeadlineInTheFutureDoesNotStop) {
  const v1::RegisterModelRequest req = longRegistration(200);
  const StopCondition later([] { return false; }, StopCondition::Clock::now() + std::chrono::hours(1));
  EXPECT_NO_THROW(buildFromRequest(req, Limits{}, &later));
  const StopCondition never;
  EXPECT_NO_THROW(buildFromRequest(req, Limits{}, &never));
}

}  // namespace
}  // namespace denoc::server
