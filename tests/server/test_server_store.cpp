// Registry and store against real denocd processes: content-addressed ids, restarts, two servers on one
// store, SIGKILL during registrations, poisoned store entries (empty, directory, links, FIFO, garbage,
// another model's record, oversized), registrations racing deletions, concurrent registrants of one new
// model, temporary files left by crashes, LRU eviction with reload from the store. The oracles are the file
// system (lstat, the bytes on disk parsed by the test) and the core in this process.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <map>
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

grpc::StatusCode getModel(v1::Dynamics::Stub& stub, const std::string& id,
                          std::chrono::milliseconds timeout = 30s) {
  v1::GetModelRequest get;
  get.set_model_id(id);
  v1::GetModelResponse got;
  return stub.GetModel(context(timeout).get(), get, &got).error_code();
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

std::string urdfText() { return readText(std::string(DENOC_MODELS_DIR) + "/panda.urdf"); }

fs::path recordPath(const TempDir& dir, const std::string& id) {
  return dir.path() / "store" / "v1" / (id + ".pb");
}

/// Whether the store holds, for id, a regular file whose bytes are the registration request (no owner).
bool storedAsRequest(const fs::path& file, const v1::RegisterModelRequest& req) {
  struct stat st {};
  if (::lstat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  v1::RegisterModelRequest stored;
  if (!stored.ParseFromString(readText(file))) return false;
  stored.DiscardUnknownFields();  // the server's own fields (owner, description: docs/service.md, "Store")
  return stored.SerializeAsString() == req.SerializeAsString();
}

std::size_t countOf(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

void stopCleanly(ServerProcess& s) {
  s.signal(SIGTERM);
  const int status = s.wait(20s);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

grpc::StatusCode deleteModel(v1::Dynamics::Stub& stub, const std::string& id) {
  v1::DeleteModelRequest del;
  del.set_model_id(id);
  v1::DeleteModelResponse resp;
  return stub.DeleteModel(context().get(), del, &resp).error_code();
}

/// On a server of dir's store: registers `count` random chains (seeds from `seed`), deletes the last one and
/// stops. The models kept are added to `models`; returns the deleted one's id.
std::string registerThenDeleteTheLast(const TempDir& dir, unsigned seed, unsigned count,
                                      std::vector<std::pair<std::string, DHSpec>>& models) {
  ServerProcess s(dir.str(), dir.str("store"));
  auto stub = s.stub();
  for (unsigned i = 0; i < count; ++i) {
    const DHSpec dh = randomChain(4 + static_cast<int>(i), seed + i);
    models.emplace_back(registerOk(*stub, dhRequest(dh)), dh);
  }
  const std::string deleted = models.back().first;
  EXPECT_EQ(deleteModel(*stub, deleted), grpc::StatusCode::OK);
  models.pop_back();
  stopCleanly(s);
  return deleted;
}

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
  EXPECT_EQ(got.model().dof(), 7u);
  EXPECT_EQ(registerOk(*b.stub(), req, &created3), id1);
  EXPECT_FALSE(created3);
  // another name or gravity: a name is not part of the id, gravity is
  req.set_name("another name");
  EXPECT_EQ(registerOk(*b.stub(), req), id1);
  req.mutable_gravity()->set_z(-9.80);
  EXPECT_NE(registerOk(*b.stub(), req), id1);
  // one file per id in the store
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir.path() / "store" / "v1"))
    files += e.path().extension() == ".pb";
  EXPECT_EQ(files, 2);
}

TEST(ServerStore, RestartKeepsModelsAndDeletionsStick) {
  TempDir dir;
  std::vector<std::pair<std::string, DHSpec>> models;
  const std::string deleted = registerThenDeleteTheLast(dir, 1, 4, models);
  ServerProcess s(dir.str(), dir.str("store"), {}, "restarted");
  auto stub = s.stub();
  const auto ids = listIds(*stub);
  for (const auto& [id, dh] : models) {
    EXPECT_TRUE(ids.count(id)) << id;
    expectIdMatches(*stub, id, dh);
  }
  EXPECT_FALSE(ids.count(deleted));
  EXPECT_EQ(getModel(*stub, deleted), grpc::StatusCode::NOT_FOUND);
}

TEST(ServerStore, AStoreOfTheUnversionedLayoutIsMovedIntoItsFormatDirectoryAtStart) {
  TempDir dir;
  const fs::path store = dir.path() / "store";
  std::vector<std::pair<std::string, DHSpec>> models;
  const std::string deleted = registerThenDeleteTheLast(dir, 41, 5, models);
  // the layout of servers before formats had directories: 4 records and a tombstone in the store itself
  ASSERT_GE(unversionStore(store), 5u);
  // a record of the format's directory wins over an unversioned one of the same id (the bare request)
  const std::string both = models.front().first;
  fs::create_directories(store / "v1");
  fs::copy_file(store / (both + ".pb"), store / "v1" / (both + ".pb"));
  const std::string kept = readText(store / "v1" / (both + ".pb"));
  {
    v1::RegisterModelRequest bare = dhRequest(models.front().second);
    std::ofstream(store / (both + ".pb"), std::ios::binary) << bare.SerializeAsString();
  }
  // temporary files of that layout: a crash's (an hour old) and a live writer's
  const fs::path old_tmp = store / ("." + std::string(64, 'd') + ".tmp.4242.0.17");
  const fs::path young_tmp = store / ("." + std::string(64, 'd') + ".tmp.4343.0.18");
  std::ofstream(old_tmp) << "half a record";
  std::ofstream(young_tmp) << "a record being written by a live replica";
  const timeval hour_ago[2] = {{::time(nullptr) - 3600, 0}, {::time(nullptr) - 3600, 0}};
  ASSERT_EQ(::utimes(old_tmp.c_str(), hour_ago), 0);
  // a later format's directory, which this server must not touch
  fs::create_directories(store / "v2");
  std::ofstream(store / "v2" / (both + ".pb")) << "a record of format 2";
  std::ofstream(store / "v2" / "notes.txt") << "format 2's own file";

  ServerProcess s(dir.str(), store.string(), {}, "upgraded");
  auto stub = s.stub();
  const auto ids = listIds(*stub);
  for (const auto& [id, dh] : models) {
    EXPECT_TRUE(ids.count(id)) << id;
    expectIdMatches(*stub, id, dh);
    EXPECT_TRUE(storedAsRequest(recordPath(dir, id), dhRequest(dh))) << id;
  }
  // the deletion's tombstone came along: the deleted model is still known as deleted
  v1::GetModelRequest get;
  get.set_model_id(deleted);
  v1::GetModelResponse got;
  const grpc::Status st = stub->GetModel(context().get(), get, &got);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(st.error_message().find("was deleted (DeleteModel)"), std::string::npos) << st.error_message();
  EXPECT_TRUE(fs::exists(store / "v1" / (deleted + ".deleted")));
  // the record in place won, the unversioned one is left, nothing else of that layout is
  EXPECT_EQ(readText(store / "v1" / (both + ".pb")), kept);
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(store))
    if (e.path().filename() != ".lock") left.push_back(e.path().filename().string());
  std::sort(left.begin(), left.end());
  std::vector<std::string> expected = {young_tmp.filename().string(), both + ".pb", "v1", "v2"};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(left, expected);
  EXPECT_EQ(readText(store / "v2" / (both + ".pb")), "a record of format 2");
  EXPECT_EQ(readText(store / "v2" / "notes.txt"), "format 2's own file");
  const std::string log = s.log();
  EXPECT_NE(log.find("moved 3 records and 1 tombstones of the unversioned layout"), std::string::npos) << log;
  EXPECT_NE(log.find("(1 left where they were)"), std::string::npos) << log;
  EXPECT_NE(log.find("holds the records of another format (v2); left alone"), std::string::npos) << log;
  EXPECT_EQ(countOf(log, "a temporary file left by a crash"), 1u) << log;
  EXPECT_EQ(countOf(log, "skipped"), 0u) << log;
  std::printf("[ figures  ] unversioned store: %zu models served after the move, 1 record left beside v1\n",
              models.size());
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
  for (const auto& e : fs::directory_iterator(dir.path() / "store" / "v1"))
    files += e.path().extension() == ".pb";
  EXPECT_EQ(ids.size(), files + 2);  // plus the two built-in models
  EXPECT_EQ(s.log().find("skipped"), std::string::npos) << s.log();
  for (std::size_t i = 0; i < acknowledged.size(); i += 10)
    expectIdMatches(*stub, acknowledged[i].first, acknowledged[i].second);
}

// what can be found in a store directory instead of a model's record
enum class Poison { Empty, Directory, DanglingLink, LinkToDevZero, Fifo, Garbage, OtherModel, Oversized };

struct PoisonCase {
  Poison poison;
  const char* name;
  const char* reason;  // in the log line that skips it
};

const std::vector<PoisonCase> kPoisons = {
    {Poison::Empty, "empty file", "skipped: empty"},
    {Poison::Directory, "directory", "skipped: a directory"},
    {Poison::DanglingLink, "dangling link", "skipped: a symbolic link"},
    {Poison::LinkToDevZero, "link to /dev/zero", "skipped: a symbolic link"},
    {Poison::Fifo, "FIFO", "skipped: a FIFO"},
    {Poison::Garbage, "garbage", "skipped: does not parse"},
    {Poison::OtherModel, "another model's record", "skipped: holds model"},
    {Poison::Oversized, "oversized file", "bytes, more than the"},
};

void poison(const fs::path& file, Poison p, const fs::path& other_record) {
  fs::remove(file);
  switch (p) {
    case Poison::Empty:
      std::ofstream(file).flush();
      break;
    case Poison::Directory:
      fs::create_directory(file);
      std::ofstream(file / "inside") << "not ours to delete";
      break;
    case Poison::DanglingLink:
      fs::create_symlink("/nonexistent/denoc/record.pb", file);
      break;
    case Poison::LinkToDevZero:
      fs::create_symlink("/dev/zero", file);
      break;
    case Poison::Fifo:
      ASSERT_EQ(::mkfifo(file.c_str(), 0644), 0);
      break;
    case Poison::Garbage:
      std::ofstream(file, std::ios::binary) << std::string("\xff\xff\xff not a protobuf \x01\x02", 22);
      break;
    case Poison::OtherModel:
      fs::copy_file(other_record, file);
      break;
    case Poison::Oversized: {
      // a sparse file past the bound of a server with --max-message-bytes 1 MiB (1 MiB + 64 KiB)
      std::ofstream(file, std::ios::binary) << "\x0a";
      fs::resize_file(file, 4u << 20);
      break;
    }
  }
}

TEST(ServerStore, PoisonedEntriesAreSkippedWithoutBlockingAndReplacedByARegistration) {
  TempDir dir;
  const std::vector<std::string> limits = {"--max-message-bytes", "1048576"};
  std::vector<std::pair<std::string, DHSpec>> models;
  std::string good;
  const DHSpec good_dh = randomChain(4, 77);
  {
    ServerProcess s(dir.str(), dir.str("store"), limits);
    auto stub = s.stub();
    good = registerOk(*stub, dhRequest(good_dh));
    for (std::size_t i = 0; i < kPoisons.size(); ++i) {
      const DHSpec dh = randomChain(3 + static_cast<int>(i % 4), 900 + static_cast<unsigned>(i));
      models.emplace_back(registerOk(*stub, dhRequest(dh)), dh);
    }
    stopCleanly(s);
  }
  for (std::size_t i = 0; i < kPoisons.size(); ++i)
    poison(recordPath(dir, models[i].first), kPoisons[i].poison, recordPath(dir, good));

  // the start neither blocks (FIFO), nor follows links (/dev/zero), nor reads past the bound
  const auto t0 = std::chrono::steady_clock::now();
  auto s = std::make_unique<ServerProcess>(dir.str(), dir.str("store"), limits, "poisoned");
  std::printf("[ figures  ] start with %zu poisoned entries: %lld ms\n", kPoisons.size(),
              static_cast<long long>(
                  std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
                      .count()));
  auto stub = s->stub();
  const auto ids = listIds(*stub);
  EXPECT_TRUE(ids.count(good));
  EXPECT_EQ(ids.size(), 3u);  // the good one and the two built-in models
  expectIdMatches(*stub, good, good_dh);

  // lookups answer NOT_FOUND well inside their deadline, from several threads at once, again and again
  std::atomic<int> not_found{0}, other{0};
  std::vector<std::thread> lookers;
  for (int t = 0; t < 4; ++t) {
    lookers.emplace_back([&] {
      auto own = s->stub();
      for (int round = 0; round < 5; ++round) {
        for (const auto& m : models) {
          const grpc::StatusCode c = getModel(*own, m.first, 5s);
          (c == grpc::StatusCode::NOT_FOUND ? not_found : other)++;
        }
      }
    });
  }
  for (auto& t : lookers) t.join();
  EXPECT_EQ(not_found.load(), static_cast<int>(4 * 5 * models.size()));
  EXPECT_EQ(other.load(), 0);

  // each bad entry logged once, with its reason, however often it was looked up
  const std::string log = s->log();
  for (std::size_t i = 0; i < kPoisons.size(); ++i) {
    const std::string file = models[i].first + ".pb skipped: ";
    EXPECT_EQ(countOf(log, file), 1u) << kPoisons[i].name << "\n" << log;
    const std::size_t at = log.find(file);
    if (at != std::string::npos) {
      const std::string line = log.substr(at, log.find('\n', at) - at);
      EXPECT_NE(line.find(kPoisons[i].reason), std::string::npos) << kPoisons[i].name << ": " << line;
    }
  }

  // a registration of each id replaces the bad entry by a good record, atomically, and says it created it
  for (std::size_t i = 0; i < kPoisons.size(); ++i) {
    bool created = false;
    EXPECT_EQ(registerOk(*stub, dhRequest(models[i].second), &created), models[i].first) << kPoisons[i].name;
    EXPECT_TRUE(created) << kPoisons[i].name;
    EXPECT_TRUE(storedAsRequest(recordPath(dir, models[i].first), dhRequest(models[i].second)))
        << kPoisons[i].name;
    bool again = true;
    registerOk(*stub, dhRequest(models[i].second), &again);
    EXPECT_FALSE(again) << kPoisons[i].name;
  }
  const std::string after = s->log();
  EXPECT_EQ(countOf(after, "; replaced by the record of a registration"), kPoisons.size()) << after;
  // the directory was moved aside, not deleted; the link's target is untouched
  std::size_t aside = 0;
  for (const auto& e : fs::directory_iterator(dir.path() / "store" / "v1"))
    aside +=
        e.path().filename().string().find(".bad.") != std::string::npos && fs::exists(e.path() / "inside");
  EXPECT_EQ(aside, 1u);
  EXPECT_TRUE(fs::is_character_file("/dev/zero"));

  // after a restart every model is there and answers like the core
  stopCleanly(*s);
  s.reset();
  ServerProcess restarted(dir.str(), dir.str("store"), limits, "restarted");
  auto stub2 = restarted.stub();
  const auto ids2 = listIds(*stub2);
  EXPECT_EQ(ids2.size(), models.size() + 3);
  for (const auto& [id, dh] : models) {
    EXPECT_TRUE(ids2.count(id)) << id;
    expectIdMatches(*stub2, id, dh);
  }
  EXPECT_EQ(restarted.log().find("skipped"), std::string::npos) << restarted.log();
}

TEST(ServerStore, RegistrationsRacingDeletionsLeaveServedAndStoredInAgreement) {
  TempDir dir;
  auto server = std::make_unique<ServerProcess>(dir.str(), dir.str("store"));
  std::vector<std::pair<std::string, DHSpec>> models;
  for (unsigned seed = 0; seed < 4; ++seed) {
    const DHSpec dh = randomChain(4, 300 + seed);
    models.emplace_back(registerOk(*server->stub(), dhRequest(dh)), dh);
  }
  // every round: two threads register one model while two delete it; then the server's answer and the
  // store must agree (served <=> a good record on disk)
  constexpr int kRounds = 500;
  std::atomic<int> round{0}, disagreements{0}, served_rounds{0};
  std::map<std::string, bool> present;  // after the last round
  auto check = [&]() noexcept {
    const auto& [id, dh] = models[static_cast<std::size_t>(round.load()) % models.size()];
    auto stub = server->stub();
    const bool served = getModel(*stub, id) == grpc::StatusCode::OK;
    const bool stored = storedAsRequest(recordPath(dir, id), dhRequest(dh));
    if (served != stored) ++disagreements;
    served_rounds += served;
    present[id] = served;
    ++round;
  };
  std::barrier sync(4, check);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto stub = server->stub();
      for (int r = 0; r < kRounds; ++r) {
        const auto& [id, dh] = models[static_cast<std::size_t>(r) % models.size()];
        if (t < 2) {
          v1::RegisterModelResponse resp;
          stub->RegisterModel(context().get(), dhRequest(dh), &resp);
        } else {
          v1::DeleteModelRequest del;
          del.set_model_id(id);
          v1::DeleteModelResponse resp;
          stub->DeleteModel(context().get(), del, &resp);
        }
        sync.arrive_and_wait();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(round.load(), kRounds);
  EXPECT_EQ(disagreements.load(), 0);
  std::printf("[ figures  ] %d of %d rounds ended with the model registered\n", served_rounds.load(),
              kRounds);
  // after a restart: every model answered as present is there, none deleted is
  server->signal(SIGKILL);
  server->wait(10s);
  server.reset();
  ServerProcess restarted(dir.str(), dir.str("store"), {}, "restarted");
  const auto ids = listIds(*restarted.stub());
  for (const auto& [id, dh] : models) EXPECT_EQ(ids.count(id) == 1, present[id]) << id;
}

TEST(ServerStore, ConcurrentRegistrantsOfANewModelExactlyOneIsCreated) {
  TempDir dir;
  ServerProcess a(dir.str(), dir.str("store"), {}, "a");
  ServerProcess b(dir.str(), dir.str("store"), {}, "b");
  constexpr int kThreads = 8;
  constexpr unsigned kModels = 25;
  for (unsigned m = 0; m < kModels; ++m) {
    const v1::RegisterModelRequest req = dhRequest(randomChain(5, 4000 + m));
    std::atomic<int> created{0}, ok{0};
    std::set<std::string> ids;
    std::mutex mutex;
    std::barrier start(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        // half on each replica sharing the store
        auto stub = (t % 2 ? b : a).stub();
        start.arrive_and_wait();
        v1::RegisterModelResponse resp;
        if (stub->RegisterModel(context().get(), req, &resp).ok()) {
          ++ok;
          created += resp.created();
          std::lock_guard lock(mutex);
          ids.insert(resp.model_id());
        }
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(ok.load(), kThreads) << "model " << m;
    EXPECT_EQ(created.load(), 1) << "model " << m;
    ASSERT_EQ(ids.size(), 1u);
    EXPECT_TRUE(storedAsRequest(recordPath(dir, *ids.begin()), req));
  }
}

TEST(ServerStore, TemporaryFilesLeftByCrashesAreRemovedAtStartYoungOnesStay) {
  TempDir dir;
  fs::create_directories(dir.path() / "store" / "v1");
  const std::string id(64, 'c');
  const fs::path old_tmp = dir.path() / "store" / "v1" / ("." + id + ".tmp.4242.0.17");
  const fs::path young_tmp = dir.path() / "store" / "v1" / ("." + id + ".tmp.4343.0.18");
  const fs::path old_dir = dir.path() / "store" / "v1" / ("." + id + ".tmp.4444.0.19");
  std::ofstream(old_tmp) << "half a record";
  std::ofstream(young_tmp) << "a record being written by a live replica";
  fs::create_directory(old_dir);
  // an hour old
  const timeval hour_ago[2] = {{::time(nullptr) - 3600, 0}, {::time(nullptr) - 3600, 0}};
  ASSERT_EQ(::utimes(old_tmp.c_str(), hour_ago), 0);
  ASSERT_EQ(::utimes(old_dir.c_str(), hour_ago), 0);
  std::ofstream(dir.path() / "store" / "v1" / "notes.txt") << "not a store file";
  ServerProcess s(dir.str(), dir.str("store"));
  EXPECT_FALSE(fs::exists(old_tmp));
  EXPECT_TRUE(fs::exists(young_tmp));
  EXPECT_TRUE(fs::is_directory(old_dir));  // not a file this server writes: left alone
  EXPECT_TRUE(fs::exists(dir.path() / "store" / "v1" / "notes.txt"));
  const std::string log = s.log();
  EXPECT_EQ(countOf(log, "a temporary file left by a crash"), 1u) << log;
  EXPECT_NE(log.find(old_tmp.filename().string()), std::string::npos) << log;
  EXPECT_NE(log.find("notes.txt is not a store file"), std::string::npos) << log;
  EXPECT_EQ(listIds(*s.stub()).size(), 2u);
}

TEST(ServerStore, CallersWithoutATokenShareOneModelQuotaAndPinnedModelsAreNotCounted) {
  TempDir dir;
  ServerProcess s(dir.str(), dir.str("store"), {"--max-models-per-principal", "2"});
  // two clients, each on a channel of its own: without tokens they are one principal
  auto first = s.stub();
  auto second = v1::Dynamics::NewStub(makeChannel(s.address()));
  const std::string one = registerOk(*first, dhRequest(randomChain(3, 71)));
  registerOk(*second, dhRequest(randomChain(3, 72)));
  EXPECT_EQ(listIds(*first).size(), 4u);  // and the two pinned examples, which count for no one
  v1::RegisterModelResponse resp;
  const grpc::Status st = second->RegisterModel(context().get(), dhRequest(randomChain(3, 73)), &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << st.error_message();
  EXPECT_NE(st.error_message().find("callers without a token own 2 models"), std::string::npos)
      << st.error_message();
  EXPECT_NE(st.error_message().find("--max-models-per-principal"), std::string::npos) << st.error_message();
  ASSERT_EQ(deleteModel(*first, one), grpc::StatusCode::OK);
  bool created = false;
  registerOk(*second, dhRequest(randomChain(3, 73)), &created);
  EXPECT_TRUE(created);
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
