// Replicas that agree: three denocd processes on 127.0.0.1 sharing one store directory. A model registered
// on one is served by the others; a deletion on one is seen by the others within the documented bound
// (docs/service.md, "Replicas"), with a message that says it was deleted; every replica lists what the disk
// holds; owners are read from the disk; registrations racing deletions leave every replica's view equal to
// the disk. A listing over large stored models answers from the records, and stops at its deadline.
// DENOC_TEST_DENOCD=/path/to/denocd runs the replicas from another build (to measure it: the figures).
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "server_process.hpp"
#include "test_support.hpp"

namespace denoc::test {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kBound = 1000ms;  // the documented bound for a deletion to be seen by every replica

/// Replicas from another build when DENOC_TEST_DENOCD names one (a wrapper execs it in denocd's place).
ChannelSetup setup() {
  ChannelSetup s;
  if (const char* other = std::getenv("DENOC_TEST_DENOCD"); other && *other)
    s.wrapper = {"sh", "-c", std::string("shift; exec ") + other + " \"$@\"", "denocd"};
  return s;
}

std::unique_ptr<ServerProcess> replica(const TempDir& dir, const std::string& tag,
                                       std::vector<std::string> extra = {}) {
  return std::make_unique<ServerProcess>(dir.str(), dir.str("store"), std::move(extra), tag, setup());
}

std::unique_ptr<grpc::ClientContext> as(const std::string& token, std::chrono::milliseconds timeout = 30s) {
  auto ctx = context(timeout);
  if (!token.empty()) ctx->AddMetadata("authorization", "Bearer " + token);
  return ctx;
}

grpc::Status getModel(const ServerProcess& s, const std::string& id, const std::string& token = {}) {
  v1::GetModelRequest req;
  req.set_model_id(id);
  v1::GetModelResponse resp;
  return s.stub()->GetModel(as(token).get(), req, &resp);
}

grpc::Status deleteModel(const ServerProcess& s, const std::string& id, const std::string& token = {}) {
  v1::DeleteModelRequest req;
  req.set_model_id(id);
  v1::DeleteModelResponse resp;
  return s.stub()->DeleteModel(as(token).get(), req, &resp);
}

std::string registerOn(const ServerProcess& s, const v1::RegisterModelRequest& req,
                       const std::string& token = {}) {
  v1::RegisterModelResponse resp;
  const grpc::Status st = s.stub()->RegisterModel(as(token).get(), req, &resp);
  EXPECT_TRUE(st.ok()) << st.error_message();
  return resp.model_id();
}

/// The unpinned ids a replica lists (every page), or nothing when a call fails.
std::optional<std::set<std::string>> listed(const ServerProcess& s, const std::string& token = {}) {
  std::set<std::string> ids;
  v1::ListModelsRequest req;
  for (;;) {
    v1::ListModelsResponse resp;
    if (!s.stub()->ListModels(as(token).get(), req, &resp).ok()) return std::nullopt;
    for (const auto& m : resp.models())
      if (!m.pinned()) ids.insert(m.model_id());
    if (resp.next_page_token().empty()) return ids;
    req.set_page_token(resp.next_page_token());
  }
}

/// The ids the store directory holds records of.
std::set<std::string> onDisk(const TempDir& dir) {
  std::set<std::string> ids;
  for (const auto& e : fs::directory_iterator(dir.path() / "store" / "v1")) {
    const std::string name = e.path().filename().string();
    if (name.size() == 67 && name.ends_with(".pb")) ids.insert(name.substr(0, 64));
  }
  return ids;
}

/// CPU seconds (user + system) a process has used, from /proc/<pid>/stat.
double cpuSeconds(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::istringstream rest(text.substr(text.rfind(')') + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

double msSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

TEST(FleetStore, RegisteredAnywhereServedEverywhereDeletedEverywhereWithinTheBound) {
  TempDir dir;
  auto a = replica(dir, "a"), b = replica(dir, "b"), c = replica(dir, "c");
  const std::vector<ServerProcess*> all = {a.get(), b.get(), c.get()};
  double worst_ms = 0;
  for (int round = 0; round < 5; ++round) {
    const std::string id = registerOn(*a, dhRequest(randomChain(5, 400u + static_cast<unsigned>(round))));
    // served by B and C (found in the store), which now hold it in memory
    for (ServerProcess* s : all) ASSERT_TRUE(getModel(*s, id).ok()) << s->address();
    // every replica lists the same models, those on disk
    for (ServerProcess* s : all) {
      EXPECT_TRUE(eventually([&] { return listed(*s) == onDisk(dir); }, kBound)) << s->address();
    }
    ASSERT_TRUE(deleteModel(*b, id).ok());
    const auto deleted_at = Clock::now();
    // A and C: NOT_FOUND, saying it was deleted, within the bound
    for (ServerProcess* s : {a.get(), c.get()}) {
      grpc::Status st;
      ASSERT_TRUE(eventually(
          [&] {
            st = getModel(*s, id);
            return st.error_code() == grpc::StatusCode::NOT_FOUND;
          },
          kBound))
          << s->address() << " still serves a deleted model";
      worst_ms = std::max(worst_ms, msSince(deleted_at));
      EXPECT_NE(st.error_message().find("was deleted"), std::string::npos) << st.error_message();
    }
    for (ServerProcess* s : all) {
      const auto l = listed(*s);
      ASSERT_TRUE(l);
      EXPECT_FALSE(l->count(id)) << s->address() << " lists a deleted model";
      EXPECT_EQ(*l, onDisk(dir)) << s->address();
    }
    // deleting it again anywhere: NOT_FOUND, deleted
    const grpc::Status again = deleteModel(*c, id);
    EXPECT_EQ(again.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_NE(again.error_message().find("was deleted"), std::string::npos) << again.error_message();
    // registered again (on C): served everywhere again, created again
    v1::RegisterModelResponse reg;
    ASSERT_TRUE(
        c->stub()->RegisterModel(context().get(), dhRequest(randomChain(5, 400u + round)), &reg).ok());
    EXPECT_TRUE(reg.created());
    for (ServerProcess* s : all) EXPECT_TRUE(getModel(*s, id).ok()) << s->address();
  }
  // models registered on each replica: every replica lists all of them
  for (int i = 0; i < 6; ++i)
    registerOn(*all[static_cast<std::size_t>(i % 3)], dhRequest(randomChain(4, 500u + i)));
  for (ServerProcess* s : all)
    EXPECT_TRUE(eventually([&] { return listed(*s) == onDisk(dir); }, kBound)) << s->address();
  EXPECT_EQ(onDisk(dir).size(), 11u);
  std::printf(
      "[ figures  ] fleet store: a deletion on B seen by A and C after at most %.1f ms (bound %lld ms)\n",
      worst_ms, static_cast<long long>(kBound.count()));
  EXPECT_LE(worst_ms, static_cast<double>(kBound.count()));
}

TEST(FleetStore, OwnersAreReadFromTheStoreNeverFromACachedCopy) {
  TempDir dir;
  std::ofstream(dir.str("tokens")) << "alice token-of-alice\nbob token-of-bob\n";
  const std::vector<std::string> tokens = {"--token-file", dir.str("tokens")};
  auto a = replica(dir, "a", tokens), b = replica(dir, "b", tokens), c = replica(dir, "c", tokens);
  const v1::RegisterModelRequest req = dhRequest(randomChain(6, 600));
  const std::string id = registerOn(*a, req, "token-of-alice");
  ASSERT_TRUE(getModel(*c, id, "token-of-bob").ok());  // C caches alice's model
  // bob cannot delete alice's model on C
  EXPECT_EQ(deleteModel(*c, id, "token-of-bob").error_code(), grpc::StatusCode::PERMISSION_DENIED);
  // alice deletes it on B; bob registers it on B: bob owns it now
  ASSERT_TRUE(deleteModel(*b, id, "token-of-alice").ok());
  // C's cached copy names alice: a deletion there is NOT_FOUND (deleted), for alice and for bob alike
  for (const std::string token : {"token-of-alice", "token-of-bob"}) {
    const grpc::Status st = deleteModel(*c, id, token);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND) << token << ": " << st.error_message();
    EXPECT_NE(st.error_message().find("was deleted"), std::string::npos) << st.error_message();
  }
  ASSERT_TRUE(getModel(*a, id, "token-of-bob").error_code() == grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(registerOn(*b, req, "token-of-bob"), id);
  // A held alice's copy before the deletion (GetModel above answered NOT_FOUND, so it was dropped): now
  // both A and C serve bob's model, and only bob may delete it, on any replica
  for (ServerProcess* s : {a.get(), c.get()}) {
    ASSERT_TRUE(getModel(*s, id, "token-of-alice").ok());
    EXPECT_EQ(deleteModel(*s, id, "token-of-alice").error_code(), grpc::StatusCode::PERMISSION_DENIED)
        << s->address();
  }
  EXPECT_TRUE(fs::exists(dir.path() / "store" / "v1" / (id + ".pb")));
  EXPECT_TRUE(deleteModel(*c, id, "token-of-bob").ok());
  EXPECT_FALSE(fs::exists(dir.path() / "store" / "v1" / (id + ".pb")));
}

TEST(FleetStore, RegistrationsOnARacingDeletionsOnBLeaveEveryReplicaEqualToTheDisk) {
  TempDir dir;
  auto a = replica(dir, "a"), b = replica(dir, "b"), c = replica(dir, "c");
  const std::vector<ServerProcess*> all = {a.get(), b.get(), c.get()};
  std::vector<std::pair<std::string, v1::RegisterModelRequest>> models;
  for (unsigned seed = 0; seed < 4; ++seed) {
    const v1::RegisterModelRequest req = dhRequest(randomChain(4, 700 + seed));
    models.emplace_back(registerOn(*a, req), req);
  }
  for (ServerProcess* s : all)
    for (const auto& m : models) ASSERT_TRUE(getModel(*s, m.first).ok());  // everyone caches every model
  constexpr int kRounds = 100;
  int lookups_wrong = 0, listings_late = 0, rounds_present = 0, acknowledged_not_served = 0;
  double worst_listing_ms = 0;
  for (int r = 0; r < kRounds; ++r) {
    const auto& [id, req] = models[static_cast<std::size_t>(r) % models.size()];
    std::barrier go(2);
    bool registered = false;
    std::thread registrant([&] {
      go.arrive_and_wait();
      v1::RegisterModelResponse resp;
      registered = a->stub()->RegisterModel(context().get(), req, &resp).ok();
    });
    std::thread deleter([&] {
      go.arrive_and_wait();
      deleteModel(*b, id);
    });
    registrant.join();
    deleter.join();
    const bool stored = fs::exists(dir.path() / "store" / "v1" / (id + ".pb"));
    rounds_present += stored;
    if (registered && !stored && getModel(*a, id).ok()) ++acknowledged_not_served;
    // every replica's lookup answers what the disk holds, at once
    for (ServerProcess* s : all) {
      const grpc::Status st = getModel(*s, id);
      if (st.ok() != stored) {
        ++lookups_wrong;
        ADD_FAILURE() << "round " << r << ": " << s->address() << " answers " << st.error_code()
                      << ", the disk " << (stored ? "holds" : "does not hold") << " the model";
      }
    }
    // and lists it, within the bound
    const auto t0 = Clock::now();
    for (ServerProcess* s : all) {
      if (!eventually([&] { return listed(*s) == onDisk(dir); }, kBound)) {
        ++listings_late;
        ADD_FAILURE() << "round " << r << ": " << s->address() << " lists other models than the disk";
      }
    }
    worst_listing_ms = std::max(worst_listing_ms, msSince(t0));
  }
  EXPECT_EQ(lookups_wrong, 0);
  EXPECT_EQ(listings_late, 0);
  std::printf(
      "[ figures  ] fleet store: %d rounds of a registration on A racing a deletion on B: %d ended with the "
      "model on disk; lookups unlike the disk %d, listings unlike the disk after %lld ms %d (slowest to "
      "agree "
      "%.1f ms), acknowledged registrations then served from A's memory without a record %d\n",
      kRounds, rounds_present, lookups_wrong, static_cast<long long>(kBound.count()), listings_late,
      worst_listing_ms, acknowledged_not_served);
}

/// A large URDF: a 1-joint chain (joint named by k, so that each copy is another model) with n fixed links.
v1::RegisterModelRequest largeUrdf(int k, int n) {
  std::ostringstream x;
  const char* inertial =
      "<inertial><mass value=\"1\"/><inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" iyy=\"0.01\" iyz=\"0\" "
      "izz=\"0.01\"/></inertial>";
  x << "<robot name=\"large" << k << "\"><link name=\"base\"/><link name=\"m\">" << inertial << "</link>"
    << "<joint name=\"j" << k << "\" type=\"continuous\"><parent link=\"base\"/><child link=\"m\"/></joint>";
  for (int i = 0; i < n; ++i) {
    x << "<link name=\"f" << i << "\">" << inertial << "</link><joint name=\"jf" << i
      << "\" type=\"fixed\"><parent link=\"m\"/><child link=\"f" << i
      << "\"/><origin xyz=\"0 0 0.1\"/></joint>";
  }
  x << "</robot>";
  v1::RegisterModelRequest r;
  r.set_name("large" + std::to_string(k));
  r.mutable_urdf()->set_text(x.str());
  return r;
}

/// Lists with a deadline; the status and the time it took.
std::pair<grpc::StatusCode, double> listWithin(const ServerProcess& s, std::chrono::milliseconds deadline) {
  const auto t0 = Clock::now();
  v1::ListModelsResponse resp;
  const grpc::Status st = s.stub()->ListModels(context(deadline).get(), {}, &resp);
  return {st.error_code(), msSince(t0)};
}

/// One-state inverse dynamics calls on the Stanford arm from another client while `busy` runs; the slowest.
double slowestCallWhile(const ServerProcess& s, const std::function<void()>& busy) {
  std::atomic<bool> done{false};
  double slowest = 0;
  int calls = 0;
  std::thread caller([&] {
    auto stub = s.stub();
    const Model m = buildModelFromDH(stanfordArmDH());
    v1::InverseDynamicsRequest req;
    req.set_model_id(registerOn(s, dhRequest(stanfordArmDH())));
    req.set_count(1);
    req.set_dof(static_cast<std::uint32_t>(m.n));
    for (int i = 0; i < m.n; ++i) {
      req.add_q(0.1);
      req.add_qd(0.1);
      req.add_qdd(0.1);
    }
    while (!done) {
      const auto t0 = Clock::now();
      v1::InverseDynamicsResponse resp;
      EXPECT_TRUE(stub->InverseDynamics(context(10s).get(), req, &resp).ok());
      slowest = std::max(slowest, msSince(t0));
      ++calls;
      std::this_thread::sleep_for(5ms);
    }
  });
  busy();
  done = true;
  caller.join();
  EXPECT_GT(calls, 0);
  return slowest;
}

/// How many records and tombstones a replica's log says it moved out of the unversioned layout.
std::pair<long, long> movedIn(const std::string& log) {
  static const std::regex re("moved ([0-9]+) records and ([0-9]+) tombstones of the unversioned layout");
  std::smatch m;
  if (!std::regex_search(log, m, re)) return {0, 0};
  return {std::stol(m[1]), std::stol(m[2])};
}

TEST(FleetStore, TwoReplicasStartingAtOnceOnAnUnversionedStoreServeEveryModelAndLoseNothing) {
  TempDir dir;
  const fs::path store = dir.path() / "store";
  constexpr int kModels = 100, kDeleted = 4, kTombstones = 10000, kRounds = 2;
  std::map<std::string, std::string> records;  // id -> the bytes of its record
  {
    auto w = replica(dir, "writer");
    std::vector<std::string> ids;
    for (int i = 0; i < kModels + kDeleted; ++i)
      ids.push_back(registerOn(*w, dhRequest(randomChain(2 + i % 4, 900u + static_cast<unsigned>(i)))));
    for (int i = 0; i < kDeleted; ++i) ASSERT_TRUE(deleteModel(*w, ids[static_cast<std::size_t>(i)]).ok());
    for (const std::string& id : onDisk(dir)) records[id] = readText(store / "v1" / (id + ".pb"));
  }
  ASSERT_EQ(records.size(), static_cast<std::size_t>(kModels));
  // and many tombstones (of models never registered here), so that the moves of both replicas overlap
  std::mt19937_64 rng(7);
  for (int i = 0; i < kTombstones; ++i) {
    char id[65];
    std::snprintf(id, sizeof id, "%016llx%016llx%016llx%016llx", static_cast<unsigned long long>(rng()),
                  static_cast<unsigned long long>(rng()), static_cast<unsigned long long>(rng()),
                  static_cast<unsigned long long>(rng()));
    std::ofstream(store / "v1" / (std::string(id) + ".deleted")).flush();
  }
  std::string split;
  std::size_t fewest_served = records.size();
  for (int round = 0; round < kRounds; ++round) {
    unversionStore(store);
    // both start at once, each moving the old layout's entries while the other does
    std::unique_ptr<ServerProcess> a, b;
    std::barrier go(2);
    const std::string r = std::to_string(round);
    std::thread ta([&] {
      go.arrive_and_wait();
      a = replica(dir, "a" + r);
    });
    std::thread tb([&] {
      go.arrive_and_wait();
      b = replica(dir, "b" + r);
    });
    ta.join();
    tb.join();
    ASSERT_TRUE(a && b);
    // every model served and listed by both; every record in place, byte for byte; nothing left behind
    for (ServerProcess* s : {a.get(), b.get()}) {
      std::size_t served = 0;
      for (const auto& [id, bytes] : records) served += getModel(*s, id).ok();
      EXPECT_EQ(served, records.size()) << s->address();
      fewest_served = std::min(fewest_served, served);
      EXPECT_EQ(listed(*s), onDisk(dir)) << s->address();
    }
    EXPECT_EQ(onDisk(dir).size(), records.size());
    for (const auto& [id, bytes] : records) EXPECT_EQ(readText(store / "v1" / (id + ".pb")), bytes) << id;
    std::size_t left = 0, tombstones = 0;
    for (const auto& e : fs::directory_iterator(store)) {
      const std::string name = e.path().filename().string();
      left += name.ends_with(".pb") || name.ends_with(".deleted");
    }
    for (const auto& e : fs::directory_iterator(store / "v1"))
      tombstones += e.path().extension() == ".deleted";
    EXPECT_EQ(left, 0u);
    EXPECT_EQ(tombstones, static_cast<std::size_t>(kDeleted + kTombstones));
    // each entry moved once, by one of them
    const auto [ra, ta_] = movedIn(a->log());
    const auto [rb, tb_] = movedIn(b->log());
    EXPECT_EQ(ra + rb, kModels) << a->log() << b->log();
    EXPECT_EQ(ta_ + tb_, kDeleted + kTombstones);
    EXPECT_EQ((a->log() + b->log()).find("left where"), std::string::npos);
    split += " " + std::to_string(ra) + "+" + std::to_string(ta_) + "/" + std::to_string(rb) + "+" +
             std::to_string(tb_);
    for (ServerProcess* s : {a.get(), b.get()}) {
      s->signal(SIGTERM);
      EXPECT_NE(s->wait(20s), -1);
    }
  }
  std::printf(
      "[ figures  ] two replicas starting at once on an unversioned store of %d records and %d tombstones, "
      "%d rounds: records+tombstones moved by A/B%s; each replica served at least %zu of the %zu models\n",
      kModels, kDeleted + kTombstones, kRounds, split.c_str(), fewest_served, records.size());
}

/// A registration's status and whether it created the model.
std::pair<grpc::Status, bool> tryRegister(const ServerProcess& s, const v1::RegisterModelRequest& req,
                                          const std::string& token) {
  v1::RegisterModelResponse resp;
  const grpc::Status st = s.stub()->RegisterModel(as(token).get(), req, &resp);
  return {st, resp.created()};
}

TEST(FleetStore, APrincipalsModelQuotaHoldsAcrossReplicasSharingTheStore) {
  TempDir dir;
  std::ofstream(dir.str("tokens")) << "alice token-of-alice\nbob token-of-bob\n";
  const std::vector<std::string> options = {"--token-file", dir.str("tokens"), "--max-models-per-principal",
                                            "3"};
  auto a = replica(dir, "a", options), b = replica(dir, "b", options);
  auto model = [](unsigned seed) { return dhRequest(randomChain(4, 1200 + seed)); };
  const std::string alice = "token-of-alice", bob = "token-of-bob";
  // alice: three models, on both replicas
  std::vector<std::string> ids;
  for (unsigned i = 0; i < 3; ++i) {
    const auto [st, created] = tryRegister(i % 2 ? *b : *a, model(i), alice);
    ASSERT_TRUE(st.ok()) << st.error_message();
    EXPECT_TRUE(created);
    ids.push_back(registerOn(*a, model(i), alice));  // registered again: counted once
  }
  // the next is refused on either replica, naming the option and the count
  for (ServerProcess* s : {a.get(), b.get()}) {
    const auto [st, created] = tryRegister(*s, model(3), alice);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
        << s->address() << ": " << st.error_message();
    EXPECT_NE(st.error_message().find("--max-models-per-principal"), std::string::npos) << st.error_message();
    EXPECT_NE(st.error_message().find("owns 3 models"), std::string::npos) << st.error_message();
    std::printf("[ figures  ] quota: %s\n", st.error_message().c_str());
  }
  EXPECT_EQ(onDisk(dir).size(), 3u);
  // at the quota, alice's own models registered again are no new ones
  for (ServerProcess* s : {a.get(), b.get()})
    for (unsigned i = 0; i < 3; ++i) {
      const auto [st, created] = tryRegister(*s, model(i), alice);
      EXPECT_TRUE(st.ok()) << st.error_message();
      EXPECT_FALSE(created);
    }
  // bob is not alice: his three go in, on both replicas; alice's model registered by bob is alice's still
  for (unsigned i = 10; i < 13; ++i) {
    const auto [st, created] = tryRegister(i % 2 ? *a : *b, model(i), bob);
    EXPECT_TRUE(st.ok()) << st.error_message();
  }
  EXPECT_TRUE(tryRegister(*b, model(0), bob).first.ok());
  EXPECT_EQ(tryRegister(*a, model(13), bob).first.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  // alice deletes one on B: she may register another at once, on A
  ASSERT_TRUE(deleteModel(*b, ids[1], alice).ok());
  EXPECT_TRUE(tryRegister(*a, model(3), alice).second);
  const std::string fourth = registerOn(*b, model(3), alice);
  EXPECT_EQ(tryRegister(*b, model(4), alice).first.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(onDisk(dir).size(), 6u);

  // racing: alice frees her quota, then 8 new models at once, 4 on each replica; a replica counts and writes
  // under its own lock, on a listing taken then: at most one per other replica passes the quota
  for (const std::string& id : {ids[0], ids[2]}) ASSERT_TRUE(deleteModel(*a, id, alice).ok());
  ASSERT_TRUE(deleteModel(*a, fourth, alice).ok());
  std::atomic<int> ok{0}, refused{0};
  std::vector<std::thread> racers;
  std::barrier race(8);
  for (unsigned i = 0; i < 8; ++i)
    racers.emplace_back([&, i] {
      race.arrive_and_wait();
      const auto [st, created] = tryRegister(i % 2 ? *a : *b, model(20 + i), alice);
      if (st.ok()) ++ok;
      if (st.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) ++refused;
    });
  for (auto& t : racers) t.join();
  EXPECT_EQ(ok + refused, 8);
  EXPECT_GE(ok.load(), 3);
  EXPECT_LE(ok.load(), 3 + 1) << "more than one over the quota with two replicas";
  std::printf("[ figures  ] quota 3, 8 registrations racing on 2 replicas: %d stored, %d refused\n",
              ok.load(), refused.load());
}

TEST(FleetStore, ListingLargeStoredModelsReadsTheRecordsAndStopsAtItsDeadline) {
  TempDir dir;
  constexpr int kModels = 30, kFixedLinks = 3000;
  {
    auto writer = replica(dir, "writer", {"--examples", "false", "--max-models", "64"});
    for (int k = 0; k < kModels; ++k) registerOn(*writer, largeUrdf(k, kFixedLinks));
  }
  ASSERT_EQ(onDisk(dir).size(), static_cast<std::size_t>(kModels));
  // a replica that holds at most two models in memory: the listing finds the others only in the store
  auto r = replica(dir, "reader", {"--examples", "false", "--max-models", "2"});
  const double cpu0 = cpuSeconds(r->pid());
  std::vector<std::pair<grpc::StatusCode, double>> short_calls;
  const double slowest = slowestCallWhile(*r, [&] {
    for (int i = 0; i < 5; ++i) short_calls.push_back(listWithin(*r, 100ms));
  });
  std::this_thread::sleep_for(300ms);
  const double cpu1 = cpuSeconds(r->pid());
  std::this_thread::sleep_for(1000ms);
  const double cpu_after = cpuSeconds(r->pid()) - cpu1;  // work left behind by the calls
  int ok = 0;
  double worst = 0;
  for (const auto& [code, ms] : short_calls) {
    EXPECT_TRUE(code == grpc::StatusCode::OK || code == grpc::StatusCode::DEADLINE_EXCEEDED) << code;
    ok += code == grpc::StatusCode::OK;
    worst = std::max(worst, ms);
  }
  const double cpu_full0 = cpuSeconds(r->pid());
  const auto whole = listWithin(*r, 120s);
  const double cpu_full = cpuSeconds(r->pid()) - cpu_full0;
  EXPECT_EQ(whole.first, grpc::StatusCode::OK);
  std::printf(
      "[ figures  ] fleet store: ListModels of the %d large models without a deadline: %.1f ms, server CPU "
      "%.3f s\n",
      kModels, whole.second, cpu_full);
  const auto l = listed(*r);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->size(), static_cast<std::size_t>(kModels) + 1);  // and the arm of the other client
  std::printf(
      "[ figures  ] fleet store: ListModels of %d stored models of %d links (100 ms deadline) x5: %d OK, "
      "slowest "
      "%.1f ms; server CPU %.2f s for the 5 calls, %.2f s in the second after; another client's slowest "
      "one-state call meanwhile %.1f ms\n",
      kModels, kFixedLinks + 2, ok, worst, cpu1 - cpu0, cpu_after, slowest);
  // the descriptions are in the records: nothing is built. The oracle is the listing of the same store's
  // bare records below, which builds every model once: this one costs a fraction of it (and about one
  // model's build, printed here). CPU ratios, not times, so that it holds on a slow or sanitized build
  const double cpu_b0 = cpuSeconds(r->pid());
  {
    auto c = context(120s);
    const v1::RegisterModelRequest one = largeUrdf(kModels + 1, kFixedLinks);
    v1::RegisterModelResponse resp;
    EXPECT_TRUE(r->stub()->RegisterModel(c.get(), one, &resp).ok());
  }
  const double build_one = cpuSeconds(r->pid()) - cpu_b0;
  std::printf("[ figures  ] fleet store: building one such model %.3f s of server CPU; listing all %.3f s\n",
              build_one, cpu_full);
  EXPECT_LT(cpu_after, 0.2) << "work went on after the calls ended";
  (void)ok;
  (void)slowest;

  // records written before descriptions were kept (the bare request): built once, under the caller's
  // deadline, then their descriptions are known
  for (const std::string& id : onDisk(dir)) {
    v1::RegisterModelRequest bare;
    ASSERT_TRUE(bare.ParseFromString(readText(dir.path() / "store" / "v1" / (id + ".pb"))));
    bare.DiscardUnknownFields();
    const fs::path tmp = dir.path() / "store" / "v1" / ("." + id + ".tmp.test");
    std::ofstream(tmp, std::ios::binary) << bare.SerializeAsString();
    fs::rename(tmp, dir.path() / "store" / "v1" / (id + ".pb"));
  }
  r.reset();
  auto old = replica(dir, "old-records", {"--examples", "false", "--max-models", "2"});
  const double cpu2 = cpuSeconds(old->pid());
  std::vector<std::pair<grpc::StatusCode, double>> stopped;
  for (int i = 0; i < 3; ++i) stopped.push_back(listWithin(*old, 100ms));
  std::this_thread::sleep_for(300ms);
  const double cpu3 = cpuSeconds(old->pid());
  std::this_thread::sleep_for(1000ms);
  const double old_after = cpuSeconds(old->pid()) - cpu3;
  for (const auto& [code, ms] : stopped) {
    EXPECT_TRUE(code == grpc::StatusCode::OK || code == grpc::StatusCode::DEADLINE_EXCEEDED) << code;
  }
  EXPECT_LT(old_after, 0.2) << "work went on after the calls ended";
  const auto full = listWithin(*old, 120s);  // builds each bare record once
  EXPECT_EQ(full.first, grpc::StatusCode::OK);
  const double cpu_full_old = cpuSeconds(old->pid()) - cpu3;
  const double cpu4 = cpuSeconds(old->pid());
  const auto fast = listWithin(*old, 120s);
  EXPECT_EQ(fast.first, grpc::StatusCode::OK);
  // the descriptions built once are kept: the next listing builds nothing (a fraction of the first's CPU)
  EXPECT_LT(cpuSeconds(old->pid()) - cpu4, 0.25 * cpu_full_old) << "the descriptions built once are kept";
  EXPECT_LT(cpu_full, 0.25 * cpu_full_old) << "a listing of described records built models";
  std::printf(
      "[ figures  ] fleet store: bare records: 3 listings with 100 ms deadlines took %.1f / %.1f / %.1f ms "
      "(codes %d %d %d), server CPU %.2f s, %.2f s in the second after; a listing without deadline %.0f ms; "
      "then %.1f ms (CPU %.3f s)\n",
      stopped[0].second, stopped[1].second, stopped[2].second, stopped[0].first, stopped[1].first,
      stopped[2].first, cpu3 - cpu2, old_after, full.second, fast.second, cpuSeconds(old->pid()) - cpu4);
}

}  // namespace
}  // namespace denoc::test
