// Registrations that once ended or starved a real denocd (the 50,000-deep URDF that overflowed its stack,
// names of megabytes, numbers beyond double precision), against a real server on 127.0.0.1: each is refused
// with INVALID_ARGUMENT naming the limit or the field, the server stays up and keeps answering, and the
// refused models are nowhere (ListModels, the store). Also: every forward dynamics route refuses the same
// out-of-range state with the same code.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "denoc/dh.hpp"
#include "server_process.hpp"
#include "test_support.hpp"

namespace denoc::test {
namespace {

std::string nested(std::size_t levels) {
  std::string s = "<robot name=\"r\">";
  for (std::size_t i = 0; i < levels; ++i) s += "<a>";
  for (std::size_t i = 0; i < levels; ++i) s += "</a>";
  return s + "</robot>";
}

std::string panda() { return readText(fs::path(DENOC_SOURCE_DIR) / "examples/models/panda.urdf"); }

class ServerParse : public ::testing::Test {
 protected:
  void SetUp() override { server_ = std::make_unique<ServerProcess>(dir_.str(), dir_.str("store")); }

  grpc::Status registerUrdf(const std::string& text, v1::RegisterModelResponse* resp = nullptr) {
    v1::RegisterModelRequest req;
    req.mutable_urdf()->set_text(text);
    v1::RegisterModelResponse local;
    return server_->stub()->RegisterModel(context().get(), req, resp ? resp : &local);
  }

  int listed() {
    v1::ListModelsResponse resp;
    const grpc::Status st = server_->stub()->ListModels(context().get(), {}, &resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return resp.models_size();
  }

  std::size_t storeFiles() {
    std::size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir_.str("store/v1"))) n += e.path().extension() == ".pb";
    return n;
  }

  // the server is alive and answers a good registration and a listing
  void expectServing(const std::string& after) {
    EXPECT_EQ(server_->wait(std::chrono::milliseconds(0)), -1) << "denocd ended after " << after;
    v1::RegisterModelResponse resp;
    const grpc::Status st = registerUrdf(panda(), &resp);
    ASSERT_TRUE(st.ok()) << after << ": " << st.error_message();
    EXPECT_EQ(resp.model().dof(), 7u);
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(ServerParse, FiftyThousandNestedElementsAreRefusedAndTheServerStaysUp) {
  const int before = listed();
  const std::size_t stored = storeFiles();
  const grpc::Status st = registerUrdf(nested(50000));
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << st.error_message();
  EXPECT_NE(st.error_message().find("nested deeper than the limit of 64"), std::string::npos)
      << st.error_message();
  EXPECT_EQ(listed(), before);
  EXPECT_EQ(storeFiles(), stored);
  expectServing("the 50,000-deep registration");
  // the same from many clients at once changes nothing either
  std::vector<std::thread> clients;
  std::atomic<int> refused{0};
  for (int c = 0; c < 4; ++c) {
    clients.emplace_back([&] {
      for (int k = 0; k < 3; ++k)
        refused += registerUrdf(nested(50000)).error_code() == grpc::StatusCode::INVALID_ARGUMENT;
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(refused.load(), 12);
  expectServing("12 concurrent deep registrations");
}

TEST_F(ServerParse, OversizedTextsAndNamesAreRefusedAndListingsStayUsable) {
  struct Case {
    const char* what;
    std::string text;
    std::string expect;
  };
  const std::string p = panda();
  std::string long_name = p, attributes = p;
  long_name.replace(long_name.find("name=\"panda\""), 12, "name=\"" + std::string(300, 'n') + "\"");
  std::string attrs;
  for (int i = 0; i < 20000; ++i) attrs += " a" + std::to_string(i) + "=\"\"";
  attributes.insert(attributes.find("<robot") + 6, attrs);
  const std::vector<Case> cases = {
      {"a million levels (7 MB)", nested(1000000), "more than the limit of 1048576"},
      {"a 16 MiB name", "<robot name=\"" + std::string(16u << 20, 'n') + "\"/>",
       "more than the limit of 1048576"},
      {"a 300-byte robot name", long_name, "robot name of 300 bytes"},
      {"20,000 attributes", attributes, "more attributes on one element than the limit of 64"},
      {"a DTD", "<!DOCTYPE robot [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>" + p.substr(p.find("<robot")),
       "document type declaration"},
  };
  for (const Case& c : cases) {
    const grpc::Status st = registerUrdf(c.text);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.what << ": " << st.error_message();
    EXPECT_NE(st.error_message().find(c.expect), std::string::npos) << c.what << ": " << st.error_message();
    EXPECT_LT(st.error_message().size(), 1024u) << c.what;
  }
  EXPECT_EQ(listed(), 2);  // the two built-in examples
  expectServing("the oversized registrations");
}

TEST_F(ServerParse, NumbersBeyondTheRangesAreRefusedNamingTheField) {
  auto stub = server_->stub();
  // a DH length of 1e308 (an OK answer holding inf before)
  DHSpec dh = stanfordArmDH();
  dh.links[1].a = 1e308;
  v1::RegisterModelResponse resp;
  grpc::Status st = stub->RegisterModel(context().get(), dhRequest(dh), &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(st.error_message().find("DH a is 1e+308"), std::string::npos) << st.error_message();
  // a denormal mass
  dh = stanfordArmDH();
  dh.links[4].mass = 1e-310;
  st = stub->RegisterModel(context().get(), dhRequest(dh), &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(st.error_message().find("mass is 1e-310"), std::string::npos) << st.error_message();
  // a state beyond the range: every route refuses it the same way
  st = stub->RegisterModel(context().get(), dhRequest(stanfordArmDH()), &resp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  for (const v1::ForwardRoute route :
       {v1::FORWARD_ROUTE_SAHA, v1::FORWARD_ROUTE_CHOLESKY, v1::FORWARD_ROUTE_FIXMAN}) {
    v1::ForwardDynamicsRequest req;
    req.set_model_id(resp.model_id());
    req.set_count(1);
    req.set_dof(6);
    req.set_route(route);
    for (int i = 0; i < 6; ++i) {
      req.add_q(i == 2 ? 1e200 : 0.1);  // the prismatic joint 1e200 m out
      req.add_qd(0.0);
      req.add_tau(0.0);
    }
    v1::ForwardDynamicsResponse out;
    const grpc::Status fd = stub->ForwardDynamics(context().get(), req, &out);
    EXPECT_EQ(fd.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << route << ": " << fd.error_message();
    EXPECT_NE(fd.error_message().find("q[2] is 1e+200"), std::string::npos) << fd.error_message();
  }
  expectServing("the out-of-range numbers");
}

}  // namespace
}  // namespace denoc::test
