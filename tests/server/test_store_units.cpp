// Units of the store, the registry and the log hygiene, called directly (no gRPC server, so ThreadSanitizer
// sees every hand-off: tests/sanitize.sh tsan runs this binary). Oracles: the file system (lstat, the bytes
// on disk), an unescaping written here from the escape rules, hand-computed token-bucket counts, the
// address families of inet_pton, and exact counts of created registrations over threads.
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <barrier>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "errors.hpp"
#include "log.hpp"
#include "options.hpp"
#include "registration.hpp"
#include "registry.hpp"
#include "store.hpp"
#include "store_record.hpp"
#include "test_support.hpp"

namespace denoc::server {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "denoc_store_units.XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  /// Where a store on path() keeps its records: the format's directory.
  fs::path records() const { return path_ / kStoreFormat; }

 private:
  fs::path path_;
};

/// Captures what the default logger writes while it lives.
class LogCapture {
 public:
  LogCapture() : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", sink));
  }
  ~LogCapture() { spdlog::set_default_logger(previous_); }
  std::string text() {
    spdlog::default_logger()->flush();
    return out_.str();
  }
  std::size_t count(const std::string& what) {
    const std::string t = text();
    std::size_t n = 0;
    for (std::size_t at = t.find(what); at != std::string::npos; at = t.find(what, at + 1)) ++n;
    return n;
  }

 private:
  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> previous_;
};

// ---- escaping
// ----------------------------------------------------------------------------------------------

/// The inverse of the escape rules (written from the rules, not from the code): \n \r \t \xHH.
std::string unescape(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 >= s.size()) {
      out += s[i];
      continue;
    }
    const char c = s[i + 1];
    if (c == 'n' || c == 'r' || c == 't') {
      out += c == 'n' ? '\n' : c == 'r' ? '\r' : '\t';
      ++i;
    } else if (c == 'x' && i + 3 < s.size()) {
      out += static_cast<char>(std::stoi(s.substr(i + 2, 2), nullptr, 16));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

bool printableAscii(const std::string& s) {
  for (unsigned char c : s)
    if (c < 0x20 || c > 0x7e) return false;
  return true;
}

TEST(Escaping, ControlAndNonAsciiBytesBecomeEscapes) {
  EXPECT_EQ(escaped("panda_link1"), "panda_link1");
  EXPECT_EQ(escaped("a\nb\r\tc"), "a\\nb\\r\\tc");
  EXPECT_EQ(escaped("\x1b[31mred\x1b[0m"), "\\x1b[31mred\\x1b[0m");
  EXPECT_EQ(escaped(std::string("nul\0here", 8)), "nul\\x00here");
  EXPECT_EQ(escaped("\x7f"), "\\x7f");
  EXPECT_EQ(escaped("gr\xc3\xbc\xc3\x9f"), "gr\\xc3\\xbc\\xc3\\x9f");  // UTF-8 "gruess", bytewise
  EXPECT_EQ(quoted("a\nb"), "'a\\nb'");
}

TEST(Escaping, RandomBytesRoundTripAndEscapingTwiceChangesNothing) {
  std::mt19937 rng(7);
  for (int k = 0; k < 2000; ++k) {
    std::string s(static_cast<std::size_t>(rng() % 64), '\0');
    for (char& c : s) c = static_cast<char>(rng() % 256);
    const std::string e = escaped(s, 1000);
    EXPECT_TRUE(printableAscii(e)) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos);
    // reversible whenever the text holds no backslash of its own (backslashes are kept as they are)
    if (s.find('\\') == std::string::npos) {
      EXPECT_EQ(unescape(e), s) << e;
    }
    EXPECT_EQ(escaped(e, 1000), e);
  }
}

TEST(Escaping, LongTextIsCutWithItsLengthNeverInsideAnEscape) {
  EXPECT_EQ(escaped(std::string(5000, 'a'), 96), std::string(96, 'a') + "... (5000 bytes)");
  EXPECT_EQ(quoted(std::string(5000, 'a'), 8), "'aaaaaaaa...' (5000 bytes)");
  // 4 characters per escape: 2 fit in 10, the third would not
  EXPECT_EQ(escaped(std::string(100, '\x01'), 10), "\\x01\\x01... (100 bytes)");
  EXPECT_EQ(escaped(std::string(96, 'b'), 96), std::string(96, 'b'));  // exactly at the bound: not cut
}

TEST(Escaping, StatusMessagesAreSafeAndBounded) {
  const std::string name(20000, 'n');
  const std::string full = "URDF link '" + name + "\n\x1b[2J': mass is 0";
  const std::string m = safeMessage(full);
  EXPECT_TRUE(printableAscii(m));
  EXPECT_LE(m.size(), kMaxStatusMessage + 24);
  EXPECT_EQ(m, "URDF link '" + std::string(kMaxStatusMessage - 11, 'n') + "... (" +
                   std::to_string(full.size()) + " bytes)");
  // through toStatus, the one mapping: the code is kept, the message made safe
  grpc::Status st;
  try {
    fail(ErrorCode::InvalidArgument, "name 'x\ny' " + name);
  } catch (...) {
    st = toStatus(std::current_exception());
  }
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(printableAscii(st.error_message()));
  EXPECT_LE(st.error_message().size(), kMaxStatusMessage + 24);
  EXPECT_EQ(st.error_message().rfind("name 'x\\ny' nnn", 0), 0u) << st.error_message().substr(0, 40);
}

// ---- the rate limit
// ------------------------------------------------------------------------------------------

TEST(LogLimiter, BurstThenRateThenTheCountHeldBack) {
  LogLimiter limiter(1.0, 3.0);  // 3 at once, then 1 a second
  const auto t0 = LogLimiter::Clock::now();
  const LogLimiter::Kind kind{"GetModel", "INVALID_ARGUMENT"};
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.admit(kind, t0).log);
  const auto fourth = limiter.admit(kind, t0);
  EXPECT_FALSE(fourth.log);
  EXPECT_TRUE(fourth.starts_limiting);
  const auto fifth = limiter.admit(kind, t0 + 500ms);
  EXPECT_FALSE(fifth.log);
  EXPECT_FALSE(fifth.starts_limiting);
  // another kind has its own bucket
  EXPECT_TRUE(limiter.admit({"GetModel", "NOT_FOUND"}, t0).log);
  // one token a second: at t0 + 1 s the next line is written and says 2 were held back
  const auto later = limiter.admit(kind, t0 + 1000ms);
  EXPECT_TRUE(later.log);
  EXPECT_EQ(later.held_back, 2u);
  EXPECT_FALSE(limiter.admit(kind, t0 + 1100ms).log);
  // the bucket holds at most `burst` tokens however long it rested
  int logged = 0;
  for (int i = 0; i < 10; ++i) logged += limiter.admit(kind, t0 + 3600s).log;
  EXPECT_EQ(logged, 3);
  std::uint64_t held = 0;
  for (const auto& [k, n] : limiter.heldBack())
    if (k == kind) held = n;
  EXPECT_EQ(held, 2u + 1u + 7u);
}

TEST(LogLimiter, ThreadsShareOneBucketExactly) {
  LogLimiter limiter(1.0, 5.0);
  const auto t0 = LogLimiter::Clock::now();
  std::atomic<int> logged{0}, starts{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        const auto v = limiter.admit({"RegisterModel", "INVALID_ARGUMENT"}, t0);
        logged += v.log;
        starts += v.starts_limiting;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(logged.load(), 5);
  EXPECT_EQ(starts.load(), 1);
  EXPECT_EQ(limiter.heldBack().at(0).second, 8000u - 5u);
}

// ---- loopback addresses
// ------------------------------------------------------------------------------------

TEST(Loopback, JudgedOnTheParsedAddressNotItsSpelling) {
  for (const char* a :
       {"127.0.0.1:50051", "127.1.2.3:1", "127.255.255.254:9100", "[::1]:50051", "[::ffff:127.0.0.1]:1",
        "unix:/tmp/denoc.sock", "unix-abstract:denoc", "localhost:50051"})
    EXPECT_TRUE(isLoopbackAddress(a)) << a;
  for (const char* a : {"0.0.0.0:50051",
                        "[::]:50051",
                        "10.0.0.5:50051",
                        "128.0.0.1:1",
                        "126.255.255.255:1",
                        "denoc.example:443",
                        "127.example.com:1",
                        "127.0.0.1.example.invalid:1",
                        "127.0.0.1x:1",
                        "127.1:1",
                        "9100",
                        ":9100",
                        "",
                        "::1:50051",
                        "[::1]x",
                        "[::1",
                        "127.0.0.1:1,0.0.0.0:2",
                        " 127.0.0.1:1",
                        "[::ffff:10.0.0.1]:1",
                        "localhost.example.invalid:1",
                        "ipv4:127.0.0.1:1"})
    EXPECT_FALSE(isLoopbackAddress(a)) << a;
}

TEST(Loopback, MetricsOffLoopbackNeedTheOptIn) {
  ServerOptions o;
  o.metrics.listen = "0.0.0.0:9100";
  EXPECT_NE(checkOptions(o).find("--metrics-public"), std::string::npos) << checkOptions(o);
  o.metrics.allow_public = true;
  EXPECT_EQ(checkOptions(o), "");
  o.metrics.allow_public = false;
  o.metrics.listen = "127.0.0.1:9100";
  EXPECT_EQ(checkOptions(o), "");
}

// ---- store entries
// -------------------------------------------------------------------------------------------

v1::RegisterModelRequest request(unsigned seed, int n = 4) {
  return test::dhRequest(test::randomChain(n, seed));
}

constexpr std::uint64_t kBound = 1u << 20;

TEST(StoreEntries, OnlyRegularFilesWithinTheBoundAreRead) {
  TempDir dir;
  const ModelStore store(dir.path().string());
  auto at = [&](char c) { return std::string(64, c); };
  const fs::path d = dir.records();
  std::ofstream(d / (at('1') + ".pb")).flush();                    // empty
  fs::create_directory(d / (at('2') + ".pb"));                     // directory
  fs::create_symlink("/nonexistent/x.pb", d / (at('3') + ".pb"));  // dangling link
  fs::create_symlink("/dev/zero", d / (at('4') + ".pb"));          // link to a device
  ASSERT_EQ(::mkfifo((d / (at('5') + ".pb")).c_str(), 0644), 0);   // FIFO: never opened
  std::ofstream(d / (at('6') + ".pb")) << "bytes";                 // regular
  std::ofstream(d / (at('7') + ".pb")) << "x";
  fs::resize_file(d / (at('7') + ".pb"), kBound + 1);                // one byte over the bound
  fs::create_symlink(d / (at('6') + ".pb"), d / (at('8') + ".pb"));  // link to a good file
  const std::vector<std::pair<char, std::string>> bad = {
      {'1', "empty"},  {'2', "a directory"},           {'3', "a symbolic link"}, {'4', "a symbolic link"},
      {'5', "a FIFO"}, {'7', "more than the 1048576"}, {'8', "a symbolic link"}};
  for (const auto& [c, reason] : bad) {
    const StoreEntry e = store.read(at(c), kBound);
    EXPECT_EQ(e.state, StoreEntry::State::Bad) << c;
    EXPECT_NE(e.reason.find(reason), std::string::npos) << c << ": " << e.reason;
    EXPECT_TRUE(e.bytes.empty());
    EXPECT_TRUE(e.stamp.exists);
  }
  const StoreEntry good = store.read(at('6'), kBound);
  EXPECT_EQ(good.state, StoreEntry::State::Regular);
  EXPECT_EQ(good.bytes, "bytes");
  EXPECT_EQ(store.read(at('9'), kBound).state, StoreEntry::State::Absent);
  // exactly at the bound is fine
  fs::resize_file(d / (at('7') + ".pb"), kBound);
  EXPECT_EQ(store.read(at('7'), kBound).state, StoreEntry::State::Regular);
  EXPECT_EQ(store.read(at('7'), kBound).bytes.size(), kBound);
  // usage counts regular record files only
  EXPECT_EQ(store.usage(), (std::pair<std::size_t, std::uint64_t>{3, 5 + kBound}));  // with the empty one
}

TEST(StoreEntries, ABadEntryIsReportedOnceAndNotReadAgainUntilItChanges) {
  TempDir dir;
  const ModelStore store(dir.path().string());
  const std::string id(64, 'e');
  const fs::path file = dir.records() / (id + ".pb");
  std::ofstream(file) << "garbage";
  LogCapture log;
  const StoreEntry first = store.read(id, kBound);
  ASSERT_EQ(first.state, StoreEntry::State::Regular);
  EXPECT_TRUE(store.reportBad(id, first.stamp, "does not parse"));
  EXPECT_FALSE(store.reportBad(id, first.stamp, "does not parse"));
  // the verdict is remembered for this state of the file: not read again
  const StoreEntry again = store.read(id, kBound);
  EXPECT_EQ(again.state, StoreEntry::State::Bad);
  EXPECT_EQ(again.reason, "does not parse");
  EXPECT_EQ(log.count("skipped: does not parse"), 1u) << log.text();
  // a changed file is read and judged again
  std::this_thread::sleep_for(10ms);
  std::ofstream(file) << "other garbage";
  const StoreEntry changed = store.read(id, kBound);
  EXPECT_EQ(changed.state, StoreEntry::State::Regular);
  EXPECT_TRUE(store.reportBad(id, changed.stamp, "does not parse"));
  EXPECT_EQ(log.count("skipped: does not parse"), 2u) << log.text();
}

TEST(StoreEntries, CreateIsFirstWriterWinsAndReplaceNeedsTheStampItJudged) {
  TempDir dir;
  const ModelStore store(dir.path().string());
  const std::string id(64, 'f');
  EXPECT_TRUE(store.create(id, "first"));
  EXPECT_FALSE(store.create(id, "second"));
  EXPECT_EQ(store.read(id, kBound).bytes, "first");
  const FileStamp judged = store.stamp(id);
  // someone replaces the file between judging and replacing: nothing is written
  std::this_thread::sleep_for(10ms);
  {
    std::ofstream f(dir.records() / (id + ".tmp-by-hand"));
    f << "another";
  }
  fs::rename(dir.records() / (id + ".tmp-by-hand"), dir.records() / (id + ".pb"));
  EXPECT_FALSE(store.replace(id, "mine", judged));
  EXPECT_EQ(store.read(id, kBound).bytes, "another");
  EXPECT_TRUE(store.replace(id, "mine", store.stamp(id)));
  EXPECT_EQ(store.read(id, kBound).bytes, "mine");
  // no temporary file is left behind by any of this
  for (const auto& e : fs::directory_iterator(dir.records()))
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
}

TEST(StoreEntries, StaleTemporaryFilesAreRemovedYoungOnesStay) {
  TempDir dir;
  const ModelStore store(dir.path().string());
  const std::string id(64, 'a');
  const fs::path old_tmp = dir.records() / ("." + id + ".tmp.1.2.3");
  const fs::path young_tmp = dir.records() / ("." + id + ".tmp.4.5.6");
  const fs::path unrelated = dir.records() / ".tmp.not-ours";
  for (const fs::path& p : {old_tmp, young_tmp, unrelated}) std::ofstream(p) << "x";
  const timeval ten_minutes_ago[2] = {{::time(nullptr) - 600, 0}, {::time(nullptr) - 600, 0}};
  ASSERT_EQ(::utimes(old_tmp.c_str(), ten_minutes_ago), 0);
  ASSERT_EQ(::utimes(unrelated.c_str(), ten_minutes_ago), 0);
  EXPECT_EQ(store.removeStaleTemporaries(ModelStore::kStaleTemporaryAge), 1u);
  EXPECT_FALSE(fs::exists(old_tmp));
  EXPECT_TRUE(fs::exists(young_tmp));
  EXPECT_TRUE(fs::exists(unrelated));
  const StoreListing listing = store.list();
  EXPECT_EQ(listing.temporaries.size(), 1u);
  EXPECT_EQ(listing.others, (std::vector<std::string>{".tmp.not-ours"}));
}

// ---- the registry over threads
// -------------------------------------------------------------------------------

constexpr Limits kLimits{64, 1000, 1u << 20};

TEST(RegistryThreads, ExactlyOneOfManyConcurrentRegistrantsCreates) {
  TempDir dir;
  const ModelStore store(dir.path().string());
  Registry registry(store, 1000, kLimits);
  // and a second registry on the same directory: another replica
  const ModelStore store2(dir.path().string());
  Registry replica(store2, 1000, kLimits);
  constexpr int kThreads = 8;
  for (unsigned m = 0; m < 10; ++m) {
    const v1::RegisterModelRequest req = request(100 + m);
    std::atomic<int> created{0};
    std::barrier start(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        BuiltModel built = buildFromRequest(req, kLimits);  // outside every lock, as a handler does
        const std::string record = storeRecord(req, "owner-" + std::to_string(t));
        start.arrive_and_wait();
        created += (t % 2 ? replica : registry).add(std::move(built), &record, false).second;
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(created.load(), 1) << "model " << m;
  }
  EXPECT_EQ(store.ids().size(), 10u);
}

TEST(RegistryThreads, RegistrationsDeletionsAndLookupsKeepCacheAndStoreInAgreement) {
  TempDir dir;
  const ModelStore store(dir.path().string());
  Registry registry(store, 1000, kLimits);
  const v1::RegisterModelRequest req = request(7);
  const std::string record = storeRecord(req, "");
  const std::string id = buildFromRequest(req, kLimits).id;
  std::atomic<int> disagreements{0}, present{0};
  constexpr int kRounds = 300;
  auto check = [&]() noexcept {
    // served <=> a good record on disk
    const bool served = registry.find(id) != nullptr;
    const StoreEntry e = store.read(id, ModelStore::recordBound(kLimits));
    const bool stored = e.state == StoreEntry::State::Regular && e.bytes == record;
    disagreements += served != stored;
    present += served;
  };
  std::barrier sync(4, check);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        try {
          if (t < 2) {
            registry.add(buildFromRequest(req, kLimits), &record, false);
          } else if (t == 2) {
            registry.remove(id);
          } else {
            registry.find(id);
          }
        } catch (const RequestError& e) {
          EXPECT_EQ(e.code(), ErrorCode::NotFound) << e.what();
        }
        sync.arrive_and_wait();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(disagreements.load(), 0);
  std::printf("[ figures  ] %d of %d rounds ended with the model registered\n", present.load(), kRounds);
  // a fresh registry on the same store (a restart) agrees with the last round
  const bool last = registry.find(id) != nullptr;
  const ModelStore reopened(dir.path().string());
  Registry restarted(reopened, 1000, kLimits);
  restarted.loadStore();
  EXPECT_EQ(restarted.find(id) != nullptr, last);
}

TEST(RegistryThreads, LookupsOfPoisonedIdsFromManyThreadsNeitherBlockNorCache) {
  TempDir dir;
  const ModelStore store(dir.path().string());
  Registry registry(store, 1000, kLimits);
  const v1::RegisterModelRequest req = request(11);
  const std::string id = buildFromRequest(req, kLimits).id;
  ASSERT_EQ(::mkfifo((dir.records() / (id + ".pb")).c_str(), 0644), 0);
  LogCapture log;
  std::vector<std::thread> threads;
  std::atomic<int> found{0};
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) found += registry.find(id) != nullptr;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(found.load(), 0);
  EXPECT_EQ(log.count("skipped: a FIFO"), 1u) << log.text();
  // a registration replaces it, once, with a good record
  const std::string record = storeRecord(req, "");
  EXPECT_TRUE(registry.add(buildFromRequest(req, kLimits), &record, false).second);
  EXPECT_FALSE(registry.add(buildFromRequest(req, kLimits), &record, false).second);
  struct stat st {};
  ASSERT_EQ(::lstat((dir.records() / (id + ".pb")).c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(store.read(id, kBound).bytes, record);
  EXPECT_EQ(log.count("was bad (a FIFO); replaced"), 1u) << log.text();
}

// ---- the registry and the caller's stop condition
// ---------------------------------------------------------------

TEST(RegistryStop, ABuildFromTheStoreHonoursTheCallersStopAndLeavesNoVerdict) {
  TempDir dir;
  const ModelStore store(dir.path().string());
  const v1::RegisterModelRequest req = request(21, 12);
  const std::string record = storeRecord(req, "");
  const std::string id = buildFromRequest(req, kLimits).id;
  {
    Registry writer(store, 1000, kLimits);
    ASSERT_TRUE(writer.add(buildFromRequest(req, kLimits), &record, false).second);
  }
  // another replica: a cache miss builds the stored model, polling the caller's stop condition
  const ModelStore other(dir.path().string());
  Registry replica(other, 1000, kLimits);
  LogCapture log;
  const StopCondition late(nullptr, StopCondition::Clock::now() - 1s);
  try {
    replica.find(id, &late);
    FAIL() << "not stopped";
  } catch (const Stopped& e) {
    EXPECT_EQ(e.reason(), StopReason::Deadline) << e.what();
  }
  std::atomic<int> asked{0};
  const StopCondition cancelled([&] { return ++asked > 0; }, StopCondition::Clock::time_point::max(), 0ns);
  EXPECT_THROW(replica.list(
                   "", [](const v1::ModelInfo&) { return true; }, &cancelled),
               Stopped);
  EXPECT_GT(asked.load(), 0);
  // the stop judged nothing: the record is not reported bad, and the next lookup builds and caches it
  EXPECT_EQ(log.count("skipped"), 0u) << log.text();
  EXPECT_EQ(replica.size(), 0u);
  ASSERT_NE(replica.find(id), nullptr);
  EXPECT_EQ(replica.size(), 1u);
}

TEST(RegistryStop, ADeletionReadsTheOwnerFromTheRecordWithoutBuildingTheModel) {
  TempDir dir;
  const ModelStore store(dir.path().string());
  const v1::RegisterModelRequest req = request(22, 6);
  const std::string id = buildFromRequest(req, kLimits).id;
  {
    Registry writer(store, 1000, kLimits);
    const std::string record = storeRecord(req, "alice");
    ASSERT_TRUE(writer.add(buildFromRequest(req, kLimits), &record, false).second);
  }
  // a server whose limits refuse the model (4 joints at most): it cannot build it, and still deletes it,
  // checking its owner from the record alone
  constexpr Limits small{4, 1000, 1u << 20};
  {
    const ModelStore probe_store(dir.path().string());  // its own verdicts
    Registry probe(probe_store, 1000, small);
    LogCapture log;
    EXPECT_EQ(probe.find(id), nullptr);  // cannot be built under these limits
    EXPECT_EQ(log.count("max_dof"), 1u) << log.text();
  }
  Registry registry(store, 1000, small);
  const std::string bob = "bob", alice = "alice";
  try {
    registry.remove(id, &bob);
    FAIL() << "bob deleted alice's model";
  } catch (const RequestError& e) {
    EXPECT_EQ(e.code(), ErrorCode::PermissionDenied) << e.what();
  }
  EXPECT_TRUE(fs::exists(dir.records() / (id + ".pb")));
  registry.remove(id, &alice);
  EXPECT_FALSE(fs::exists(dir.records() / (id + ".pb")));
  try {
    registry.remove(id, &alice);
    FAIL() << "deleted twice";
  } catch (const RequestError& e) {
    EXPECT_EQ(e.code(), ErrorCode::NotFound) << e.what();
  }
}

TEST(RegistryReplicas, ADeletionOnOneIsSeenByTheOtherAtOnceAndLeavesATombstone) {
  TempDir dir;
  const ModelStore store_a(dir.path().string()), store_b(dir.path().string());
  Registry a(store_a, 1000, kLimits), b(store_b, 1000, kLimits);
  const v1::RegisterModelRequest req = request(31, 5);
  const BuiltModel built = buildFromRequest(req, kLimits);
  const std::string id = built.id;
  const v1::ModelInfo info = describe(built, false);
  const std::string record = storeRecord(req, "", &info);
  ASSERT_TRUE(a.add(buildFromRequest(req, kLimits), &record, false).second);
  ASSERT_NE(b.find(id), nullptr);  // b holds it in memory now
  EXPECT_EQ(b.notFoundMessage(id), "model_id " + id + " is not registered");
  a.remove(id);
  EXPECT_EQ(b.find(id), nullptr) << "b serves a model deleted on a";
  EXPECT_EQ(b.size(), 0u);
  EXPECT_NE(b.notFoundMessage(id).find("was deleted (DeleteModel)"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir.records() / (id + ".deleted")));
  // the listings: the tombstone is neither a model nor an unknown file
  const StoreListing listing = store_b.list();
  EXPECT_TRUE(listing.ids.empty());
  EXPECT_TRUE(listing.others.empty());
  EXPECT_EQ(listing.tombstones, std::vector<std::string>{id});
  std::size_t listed = 0;
  b.list("", [&](const v1::ModelInfo&) { return ++listed, true; });
  EXPECT_EQ(listed, 0u);
  // registered again: served, and listed from its record's description, although a tombstone stays
  ASSERT_TRUE(b.add(buildFromRequest(req, kLimits), &record, false).second);
  EXPECT_NE(a.find(id), nullptr);
  std::vector<std::string> ids;
  a.list("", [&](const v1::ModelInfo& m) { return ids.push_back(m.model_id()), true; });
  EXPECT_EQ(ids, std::vector<std::string>{id});
  // a tombstone older than a day says nothing and is removed
  const struct timeval two_days_ago[2] = {{::time(nullptr) - 2 * 86400, 0}, {::time(nullptr) - 2 * 86400, 0}};
  ASSERT_EQ(::utimes((dir.records() / (id + ".deleted")).c_str(), two_days_ago), 0);
  EXPECT_FALSE(store_a.buried(id));
  EXPECT_EQ(store_a.removeOldTombstones(ModelStore::kTombstoneAge), 1u);
  EXPECT_FALSE(fs::exists(dir.records() / (id + ".deleted")));
}

TEST(RegistryReplicas, AListingBuildsNoModelOfARecordWithADescription) {
  TempDir dir;
  const ModelStore store(dir.path().string());
  const v1::RegisterModelRequest req = request(32, 6);
  const BuiltModel built = buildFromRequest(req, kLimits);
  const std::string id = built.id;
  v1::ModelInfo info = describe(built, false);
  info.set_name("described");  // what the record says is what is listed: nothing is built
  {
    Registry writer(store, 1000, kLimits);
    const std::string record = storeRecord(req, "", &info);
    ASSERT_TRUE(writer.add(buildFromRequest(req, kLimits), &record, false).second);
  }
  // a reader whose limits refuse the model: it cannot build it, and still lists it
  constexpr Limits small{4, 1000, 1u << 20};
  Registry reader(store, 1000, small);
  std::vector<std::string> names;
  reader.list("", [&](const v1::ModelInfo& m) { return names.push_back(m.name()), true; });
  EXPECT_EQ(names, std::vector<std::string>{"described"});
  EXPECT_EQ(reader.size(), 0u);
}

}  // namespace
}  // namespace denoc::server
