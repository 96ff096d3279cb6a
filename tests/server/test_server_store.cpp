// Registry and store: content-addressed ids, restarts, two servers on one store, SIGKILL during
// registrations, corrupt store files, LRU eviction with reload from the store.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>

#include "server_process.hpp"
#include "test_support.hpp"

namespace denoc::test {
namespace {

std::string registerOk(v1::Dynamics::Stub& stub, const v1::RegisterModelRequest& req,
                       bool* created = nullptr) {
  v1::RegisterModelResponse resp;
  const grpc::Status st = stub.RegisterModel(context().get(), req, &resp);
  EXPECT_TRUE(st.ok()) << st.error_message();
  if (created) *created = resp.created();
  return resp.model_id();
}

std::set<std::string> listIds(v1::Dynamics::Stub& stub) {
  v1::ListModelsResponse resp;
  const grpc::Status st = stub.ListModels(context().get(), {}, &resp);
  EXPECT_TRUE(st.ok()) << st.error_message();
  std::set<std::string> ids;
  for (const auto& m : resp.models()) ids.insert(m.model_id());
  return ids;
}

// tau of one fixed state through the server, and the core's answer
void expectIdMatches(v1::Dynamics::Stub& stub, const std::string& id, const DHSpec& dh) {
  const Model m = buildModelFromDH(dh);
  const auto q = randomStates(1, m.n, 3), qd = randomStates(1, m.n, 4), qdd = randomStates(1, m.n, 5);
  v1::InverseDynamicsRequest req;
  req.set_model_id(id);
  req.set_count(1);
  req.set_dof(m.n);
  *req.mutable_q() = {q.begin(), q.end()};
  *req.mutable_qd() = {qd.begin(), qd.end()};
  *req.mutable_qdd() = {qdd.begin(), qdd.end()};
  v1::InverseDynamicsResponse resp;
  const grpc::Status st = stub.InverseDynamics(context().get(), req, &resp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  expectCloseField(resp.tau(), coreID(m, q, qd, qdd), "tau of " + id);
}

std::string urdfText() { return readText(std::string(DENOC_MODELS_DIR) + "/ur5.urdf"); }

TEST(ServerStore, SameUrdfTwiceAndOnTwoServersSharingAStore) {
  TempDir dir;
  ServerProcess a(dir.str(), dir.str("store"), {}, "a");
  ServerProcess b(dir.str(), dir.str("store"), {}, "b");
  v1::RegisterModelRequest req;
  req.mutable_urdf()->set_text(urdfText());
  bool created1 = false, created2 = true, created3 = true;
  const std::string id1 = registerOk(*a.stub(), req, &created1);
  const std::string id2 = registerOk(*a.stub(), req, &created2);
  EXPECT_EQ(id1, id2);
  EXPECT_TRUE(created1);
  EXPECT_FALSE(created2);
  // server b sees it through the shared store (a cache miss), and registering it there gives the same id
  v1::GetModelRequest get;
  get.set_model_id(id1);
  v1::GetModelResponse got;
  ASSERT_TRUE(b.stub()->GetModel(context().get(), get, &got).ok());
  EXPECT_EQ(got.model().dof(), 6u);
  EXPECT_EQ(registerOk(*b.stub(), req, &created3), id1);
  EXPECT_FALSE(created3);
  // another name or gravity: a name is not part of the id, gravity is
  req.set_name("another name");
  EXPECT_EQ(registerOk(*b.stub(), req), id1);
  req.mutable_gravity()->set_z(-9.80);
  EXPECT_NE(registerOk(*b.stub(), req), id1);
  // one file per id in the store
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir.path() / "store")) files += e.path().extension() == ".pb";
  EXPECT_EQ(files, 2);
}

TEST(ServerStore, RestartKeepsModelsAndDeletionsStick) {
  TempDir dir;
  std::vector<std::pair<std::string, DHSpec>> models;
  std::string deleted;
  {
    ServerProcess s(dir.str(), dir.str("store"));
    auto stub = s.stub();
    for (unsigned seed = 1; seed <= 4; ++seed) {
      const DHSpec dh = randomChain(3 + static_cast<int>(seed), seed);
      models.emplace_back(registerOk(*stub, dhRequest(dh)), dh);
    }
    deleted = models.back().first;
    v1::DeleteModelRequest del;
    del.set_model_id(deleted);
    v1::DeleteModelResponse resp;
    ASSERT_TRUE(stub->DeleteModel(context().get(), del, &resp).ok());
    models.pop_back();
    s.signal(SIGTERM);
    const int status = s.wait(20s);
    ASSERT_TRUE(WIFEXITED(status)) << status;
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
  ServerProcess s(dir.str(), dir.str("store"), {}, "restarted");
  auto stub = s.stub();
  const auto ids = listIds(*stub);
  for (const auto& [id, dh] : models) {
    EXPECT_TRUE(ids.count(id)) << id;
    expectIdMatches(*stub, id, dh);
  }
  EXPECT_FALSE(ids.count(deleted));
  v1::GetModelRequest get;
  get.set_model_id(deleted);
  v1::GetModelResponse got;
  EXPECT_EQ(stub->GetModel(context().get(), get, &got).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST(ServerStore, SigkillDuringRegistrationsReloadsCleanly) {
  TempDir dir;
  std::vector<std::pair<std::string, DHSpec>> acknowledged;
  std::mutex mutex;
  {
    ServerProcess s(dir.str(), dir.str("store"));
    std::atomic<bool> stop{false};
    std::vector<std::thread> writers;
    for (int w = 0; w < 3; ++w) {
      writers.emplace_back([&, w] {
        auto stub = s.stub();
        for (unsigned i = 0; i < 400 && !stop; ++i) {
          const DHSpec dh = randomChain(6, 1000 * (w + 1) + i);
          v1::RegisterModelResponse resp;
          if (stub->RegisterModel(context(5s).get(), dhRequest(dh), &resp).ok()) {
            std::lock_guard lock(mutex);
            acknowledged.emplace_back(resp.model_id(), dh);
          }
        }
      });
    }
    // kill once registrations are flowing
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (std::chrono::steady_clock::now() < deadline) {
      {
        std::lock_guard lock(mutex);
        if (acknowledged.size() >= 30) break;
      }
      std::this_thread::sleep_for(2ms);
    }
    s.signal(SIGKILL);
    EXPECT_NE(s.wait(10s), -1);
    stop = true;
    for (auto& t : writers) t.join();
  }
  ASSERT_GE(acknowledged.size(), 30u);
  ServerProcess s(dir.str(), dir.str("store"), {}, "restarted");
  auto stub = s.stub();
  const auto ids = listIds(*stub);
  for (const auto& [id, dh] : acknowledged) EXPECT_TRUE(ids.count(id)) << "acknowledged model lost: " << id;
  // every stored file loaded: no parse or build errors, one model per file
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir.path() / "store")) files += e.path().extension() == ".pb";
  EXPECT_EQ(ids.size(), files + 2);  // plus the two built-in models
  EXPECT_EQ(s.log().find("skipped"), std::string::npos) << s.log();
  for (std::size_t i = 0; i < acknowledged.size(); i += 10)
    expectIdMatches(*stub, acknowledged[i].first, acknowledged[i].second);
}

TEST(ServerStore, CorruptFilesAreSkipped) {
  TempDir dir;
  std::string good;
  const DHSpec dh = randomChain(4, 77);
  {
    ServerProcess s(dir.str(), dir.str("store"));
    good = registerOk(*s.stub(), dhRequest(dh));
  }
  // garbage under a valid id, a valid request under the wrong id, a stray temporary file
  const std::string bad1(64, 'a'), bad2(64, 'b');
  std::ofstream(dir.path() / "store" / (bad1 + ".pb")) << "\xff\xff\xff not a protobuf";
  fs::copy_file(dir.path() / "store" / (good + ".pb"), dir.path() / "store" / (bad2 + ".pb"));
  std::ofstream(dir.path() / "store" / ("." + good + ".tmp.1.2.3")) << "partial";
  ServerProcess s(dir.str(), dir.str("store"), {}, "restarted");
  auto stub = s.stub();
  const auto ids = listIds(*stub);
  EXPECT_TRUE(ids.count(good));
  EXPECT_FALSE(ids.count(bad1));
  EXPECT_FALSE(ids.count(bad2));
  EXPECT_EQ(ids.size(), 3u);
  expectIdMatches(*stub, good, dh);
  const std::string log = s.log();
  EXPECT_NE(log.find(bad1 + ".pb does not parse"), std::string::npos) << log;
  EXPECT_NE(log.find(bad2 + ".pb holds model " + good), std::string::npos) << log;
}

TEST(ServerStore, LruEvictionReloadsFromTheStore) {
  TempDir dir;
  ServerProcess s(dir.str(), dir.str("store"), {"--max-models", "4"});
  auto stub = s.stub();
  std::vector<std::pair<std::string, DHSpec>> models;
  for (unsigned seed = 1; seed <= 6; ++seed) {
    const DHSpec dh = randomChain(5, 500 + seed);
    models.emplace_back(registerOk(*stub, dhRequest(dh)), dh);
  }
  // 2 pinned + at most 2 cached: the others come back from the store on use
  for (int round = 0; round < 2; ++round)
    for (const auto& [id, dh] : models) expectIdMatches(*stub, id, dh);
  EXPECT_EQ(listIds(*stub).size(), 8u);
}

}  // namespace
}  // namespace denoc::test
