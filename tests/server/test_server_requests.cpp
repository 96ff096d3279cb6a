// Requests the server parses itself, against real denocd processes on 127.0.0.1: ListModels in pages
// (every model exactly once, in id order, within page_size and within the message limit, store-only
// models included; the old request without paging fields gets everything that fits), and bytes that are
// not a valid message (a string field that is not UTF-8, at any depth, in a unary call and in a Stream
// message) answered INVALID_ARGUMENT naming the field. The sets of ids are compared with the ones the test
// registered.
#include <gtest/gtest.h>

#include <future>
#include <set>

#include "grpcpp/generic/generic_stub.h"
#include "server_process.hpp"
#include "test_support.hpp"

namespace denoc::test {
namespace {

std::string registerDH(v1::Dynamics::Stub& stub, const DHSpec& dh) {
  v1::RegisterModelResponse r;
  const grpc::Status s = stub.RegisterModel(context().get(), dhRequest(dh), &r);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return r.model_id();
}

struct Listing {
  std::vector<std::string> ids;  // in the order received
  int pages = 0;
  std::vector<int> page_sizes;
};

/// Every page of a listing, following next_page_token.
Listing listAll(v1::Dynamics::Stub& stub, std::uint32_t page_size) {
  Listing out;
  v1::ListModelsRequest req;
  req.set_page_size(page_size);
  for (;;) {
    v1::ListModelsResponse resp;
    const grpc::Status s = stub.ListModels(context().get(), req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    if (!s.ok()) break;
    ++out.pages;
    out.page_sizes.push_back(resp.models_size());
    for (const auto& m : resp.models()) out.ids.push_back(m.model_id());
    if (resp.next_page_token().empty()) break;
    EXPECT_EQ(resp.next_page_token(), resp.models(resp.models_size() - 1).model_id());
    req.set_page_token(resp.next_page_token());
    if (out.pages > 10000) break;
  }
  return out;
}

void expectExactlyOnceSorted(const Listing& l, const std::set<std::string>& want, const std::string& what) {
  EXPECT_EQ(l.ids.size(), want.size()) << what;
  EXPECT_TRUE(std::is_sorted(l.ids.begin(), l.ids.end())) << what;
  EXPECT_EQ(std::set<std::string>(l.ids.begin(), l.ids.end()), want) << what;
}

TEST(ServerListModels, PagesHoldEveryModelExactlyOnceInIdOrder) {
  TempDir dir;
  std::set<std::string> want;
  {
    ServerProcess server(dir.str(), dir.str("store"));
    auto stub = server.stub();
    v1::ListModelsResponse examples;
    ASSERT_TRUE(stub->ListModels(context().get(), {}, &examples).ok());
    for (const auto& m : examples.models()) want.insert(m.model_id());
    for (unsigned k = 0; k < 150; ++k)
      want.insert(registerDH(*stub, randomChain(2 + static_cast<int>(k % 3), 500 + k)));
    ASSERT_EQ(want.size(), 152u);
    for (const std::uint32_t page : {1u, 7u, 151u, 152u, 1000u}) {
      const Listing l = listAll(*stub, page);
      expectExactlyOnceSorted(l, want, "page_size " + std::to_string(page));
      EXPECT_EQ(l.pages, static_cast<int>((152 + page - 1) / page)) << "page_size " << page;
      for (int n : l.page_sizes) EXPECT_LE(n, static_cast<int>(page));
    }
    // a client that does not page gets everything that fits: here, everything, and no token
    v1::ListModelsResponse all;
    ASSERT_TRUE(stub->ListModels(context().get(), {}, &all).ok());
    EXPECT_EQ(all.models_size(), 152);
    EXPECT_TRUE(all.next_page_token().empty());
    // a token that is not one
    v1::ListModelsRequest bad;
    bad.set_page_token("page-2");
    v1::ListModelsResponse r;
    const grpc::Status s = stub->ListModels(context().get(), bad, &r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(s.error_message().find("page_token 'page-2'"), std::string::npos) << s.error_message();
  }
  // again from a restart holding 10 models in memory: the rest only in the store, and a message limit that
  // holds a few dozen descriptions, so the default page is cut by size
  ServerProcess server(dir.str(), dir.str("store"), {"--max-models", "10", "--max-message-bytes", "16384"},
                       "small");
  auto stub = server.stub();
  v1::ListModelsResponse first;
  ASSERT_TRUE(stub->ListModels(context().get(), {}, &first).ok());
  EXPECT_LT(first.models_size(), 152);
  EXPECT_GT(first.models_size(), 0);
  EXPECT_FALSE(first.next_page_token().empty());
  EXPECT_LE(first.ByteSizeLong(), 16384u);
  const Listing by_size = listAll(*stub, 0);
  expectExactlyOnceSorted(by_size, want, "pages cut by the message limit");
  std::printf("[ figures  ] 152 models in %d pages of at most 16 KiB\n", by_size.pages);
  expectExactlyOnceSorted(listAll(*stub, 13), want, "page_size 13, store-only models");
}

TEST(ServerListModels, ModelsDeletedOrAddedBetweenPagesDoNotRepeatOthers) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"), {"--examples", "false"});
  auto stub = server.stub();
  std::vector<std::string> ids;
  for (unsigned k = 0; k < 30; ++k) ids.push_back(registerDH(*stub, randomChain(2, 900 + k)));
  std::sort(ids.begin(), ids.end());
  v1::ListModelsRequest req;
  req.set_page_size(10);
  v1::ListModelsResponse page1;
  ASSERT_TRUE(stub->ListModels(context().get(), req, &page1).ok());
  ASSERT_EQ(page1.models_size(), 10);
  // delete one already listed and one not yet; add one
  for (const std::string& gone : {ids[3], ids[20]}) {
    v1::DeleteModelRequest d;
    d.set_model_id(gone);
    v1::DeleteModelResponse dr;
    ASSERT_TRUE(stub->DeleteModel(context().get(), d, &dr).ok());
  }
  const std::string added = registerDH(*stub, randomChain(2, 999));
  std::vector<std::string> seen;
  for (const auto& m : page1.models()) seen.push_back(m.model_id());
  req.set_page_token(page1.next_page_token());
  for (;;) {
    v1::ListModelsResponse p;
    ASSERT_TRUE(stub->ListModels(context().get(), req, &p).ok());
    for (const auto& m : p.models()) seen.push_back(m.model_id());
    if (p.next_page_token().empty()) break;
    req.set_page_token(p.next_page_token());
  }
  const std::set<std::string> unique(seen.begin(), seen.end());
  EXPECT_EQ(unique.size(), seen.size()) << "a model listed twice";
  EXPECT_EQ(std::count(seen.begin(), seen.end(), ids[20]), 0);
  for (std::size_t k = 0; k < ids.size(); ++k) {
    if (k != 20) {
      EXPECT_EQ(std::count(seen.begin(), seen.end(), ids[k]), 1) << "model " << k;
    }
  }
  (void)added;  // listed or not, depending on where its id falls: both are right
}

/// A unary call with these bytes as its message; its status.
TEST(ServerDecoding, StringsThatAreNotUtf8AreRefusedNamingTheField) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"));
  auto stub = server.stub();
  const std::string id = registerDH(*stub, randomChain(3, 41));
  struct Case {
    std::string what, method, bytes, field;
  };
  auto wire = [](const google::protobuf::Message& m) { return m.SerializeAsString(); };
  // the bytes are built from valid messages, then one string's bytes are replaced (same length): protobuf
  // would refuse to serialize a proto3 string that is not UTF-8
  auto corrupt = [](std::string bytes, const std::string& valid, const std::string& bad) {
    const std::size_t at = bytes.find(valid);
    EXPECT_NE(at, std::string::npos);
    bytes.replace(at, valid.size(), bad);
    return bytes;
  };
  v1::RegisterModelRequest named = dhRequest(randomChain(2, 42));
  named.set_name("robotXX");
  v1::RegisterModelRequest joint = dhRequest(randomChain(3, 43));
  joint.mutable_dh()->mutable_links(1)->set_joint("elbowXX");
  v1::RegisterModelRequest urdf;
  urdf.mutable_urdf()->set_text("<robot name='rXX'/>");
  v1::GetModelRequest get;
  get.set_model_id(std::string(62, 'a') + "XX");
  const std::vector<Case> cases = {
      {"top-level name", "/denoc.v1.Dynamics/RegisterModel", corrupt(wire(named), "robotXX", "robot\xff\xfe"),
       "name (byte 5 of the string)"},
      {"a repeated message's string", "/denoc.v1.Dynamics/RegisterModel",
       corrupt(wire(joint), "elbowXX", "elbow\xc3\x28"), "dh.links[1].joint (byte 5 of the string)"},
      {"a nested message's string", "/denoc.v1.Dynamics/RegisterModel",
       corrupt(wire(urdf), "rXX'", "r\xed\xa0\x80"), "urdf.text (byte 14 of the string)"},  // a surrogate
      {"model_id", "/denoc.v1.Dynamics/GetModel", corrupt(wire(get), "XX", "\xc0\xaf"),
       "model_id (byte 62 of the string)"},  // an overlong '/'
  };
  for (const Case& c : cases) {
    const grpc::Status s = rawCall(server.channel(), c.method, c.bytes);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.what << ": " << s.error_message();
    EXPECT_EQ(s.error_message().rfind(c.field + " is not valid UTF-8", 0), 0u)
        << c.what << ": " << s.error_message();
  }
  // bytes that are no message at all
  const grpc::Status junk = rawCall(server.channel(), "/denoc.v1.Dynamics/InverseDynamics", "\xff\xff\xff");
  EXPECT_EQ(junk.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(junk.error_message().find("not a valid denoc.v1.InverseDynamicsRequest message"),
            std::string::npos)
      << junk.error_message();
  // in a Stream, the message's index comes first
  {
    grpc::GenericStub generic(server.channel());
    grpc::CompletionQueue cq;
    auto ctx = context(10s);
    v1::StreamRequest good;
    good.set_computation(v1::COMPUTATION_ECHO);
    v1::StreamRequest bad;
    bad.set_model_id("modelXX");
    bad.set_computation(v1::COMPUTATION_FORWARD_DYNAMICS);
    const std::string bad_bytes = corrupt(wire(bad), "modelXX", "model\xf5\x80");
    auto call = generic.PrepareCall(ctx.get(), "/denoc.v1.Dynamics/Stream", &cq);
    void* tag;
    bool ok;
    auto step = [&](void* want) {
      EXPECT_TRUE(cq.Next(&tag, &ok));
      EXPECT_EQ(tag, want);
      return ok;
    };
    call->StartCall(reinterpret_cast<void*>(1));
    step(reinterpret_cast<void*>(1));
    for (const std::string& bytes : {wire(good), bad_bytes}) {
      grpc::Slice slice(bytes);
      grpc::ByteBuffer b(&slice, 1);
      call->Write(b, reinterpret_cast<void*>(2));
      step(reinterpret_cast<void*>(2));
    }
    grpc::ByteBuffer answer;
    call->Read(&answer, reinterpret_cast<void*>(3));
    EXPECT_TRUE(step(reinterpret_cast<void*>(3)));  // the echo
    call->Read(&answer, reinterpret_cast<void*>(4));
    EXPECT_FALSE(step(reinterpret_cast<void*>(4)));
    grpc::Status st;
    call->Finish(&st, reinterpret_cast<void*>(5));
    step(reinterpret_cast<void*>(5));
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(st.error_message().rfind("message 1: model_id (byte 5 of the string) is not valid UTF-8", 0),
              0u)
        << st.error_message();
    cq.Shutdown();
    while (cq.Next(&tag, &ok)) {
    }
  }
  // and the server goes on
  v1::GetModelRequest fine;
  fine.set_model_id(id);
  v1::GetModelResponse r;
  EXPECT_TRUE(stub->GetModel(context().get(), fine, &r).ok());
}

}  // namespace
}  // namespace denoc::test
