#include "store.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <thread>

#include "errors.hpp"
#include "log.hpp"
#include "model_id.hpp"

namespace denoc::server {

namespace {

constexpr std::size_t kMaxVerdicts = 65536;            // bad entries remembered (then forgotten at once)
constexpr std::uint64_t kRecordSlack = 64u << 10;      // a record: the request, its description, its owner
constexpr std::chrono::milliseconds kLockWait{10000};  // wait for another replica's replacement
constexpr std::chrono::milliseconds kLockPoll{2};      // between two tries of the lock
constexpr const char* kLockName = ".lock";             // <dir>/.lock: one byte per id stripe
constexpr std::size_t kTmpPrefix = 1 + 64 + 5;         // ".<id>.tmp."

std::string errnoText(const std::string& what, const std::string& path) {
  return what + " " + escaped(path, 512) + ": " + std::strerror(errno);
}

std::int64_t nanos(const timespec& t) { return static_cast<std::int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec; }

/// How long ago a file was last written (its mtime against the wall clock), in nanoseconds.
std::int64_t ageNanos(const struct stat& st) {
  const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  return now - nanos(st.st_mtim);
}

FileStamp stampOf(const struct stat& st) {
  FileStamp s;
  s.exists = true;
  s.dev = st.st_dev;
  s.ino = st.st_ino;
  s.mode = st.st_mode;
  s.size = st.st_size;
  s.mtime_ns = nanos(st.st_mtim);
  s.ctime_ns = nanos(st.st_ctim);
  return s;
}

/// What a file that is not regular is, for a reason in the log.
std::string notRegular(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link (store entries must be regular files; links are not followed)";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

bool writeAll(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

std::string uniqueSuffix() {
  static std::atomic<unsigned long> counter{0};
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1)) + "." +
         std::to_string(rng());
}

bool isTemporaryName(const std::string& name) {
  return name.size() > kTmpPrefix && name[0] == '.' && isModelId(name.substr(1, 64)) &&
         name.compare(65, 5, ".tmp.") == 0;
}

bool isTombstoneName(const std::string& name) {
  return name.size() == 72 && name.ends_with(".deleted") && isModelId(name.substr(0, 64));
}

bool isQuarantineName(const std::string& name) {
  return name.size() > 70 && name[0] == '.' && isModelId(name.substr(1, 64)) &&
         name.compare(65, 5, ".bad.") == 0;
}

/// One byte of <dir>/.lock, chosen by the id, held with an open file description lock (F_OFD_SETLK): it
/// excludes the other servers sharing the directory, and other threads, from replacing the same entry.
/// A file system without such locks leaves only the in-process lock (logged once).
class StripeLock {
 public:
  StripeLock(const std::string& dir, const std::string& id) {
    const std::string path = dir + "/" + kLockName;
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
    struct stat st {};
    if (fd_ < 0 || ::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
      unlockedOnce("cannot use " + path +
                   (fd_ < 0 ? ": " + std::string(std::strerror(errno)) : ": not a regular file"));
      closeFd();
      return;
    }
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = static_cast<off_t>(std::stoul(id.substr(0, 4), nullptr, 16));
    fl.l_len = 1;
    const auto deadline = std::chrono::steady_clock::now() + kLockWait;
    while (::fcntl(fd_, F_OFD_SETLK, &fl) != 0) {
      if (errno != EAGAIN && errno != EACCES && errno != EINTR) {
        unlockedOnce("the file system of " + dir + " has no record locks (" + std::strerror(errno) + ")");
        closeFd();
        return;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        closeFd();
        fail(ErrorCode::Unavailable, "model store: another server has held the lock of " + id + " in " +
                                         escaped(path, 512) + " for " + std::to_string(kLockWait.count()) +
                                         " ms; try again");
      }
      std::this_thread::sleep_for(kLockPoll);
    }
  }
  ~StripeLock() { closeFd(); }  // closing the description releases its locks
  StripeLock(const StripeLock&) = delete;
  StripeLock& operator=(const StripeLock&) = delete;

 private:
  void closeFd() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  static void unlockedOnce(const std::string& why) {
    static std::atomic<bool> said{false};
    if (!said.exchange(true))
      spdlog::warn("model store: {}; bad entries are replaced without a lock shared with other servers",
                   escaped(why, 512));
  }
  int fd_ = -1;
};

/// The entries of a directory by kind (ModelStore::list).
StoreListing listDirectory(const std::string& dir) {
  StoreListing out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (name.size() == 67 && name.ends_with(".pb") && isModelId(name.substr(0, 64))) {
      out.ids.push_back(name.substr(0, 64));
    } else if (isTemporaryName(name)) {
      out.temporaries.push_back(name);
    } else if (isTombstoneName(name)) {
      out.tombstones.push_back(name.substr(0, 64));
    } else if (name != kLockName && !isQuarantineName(name)) {
      out.others.push_back(name);
    }
  }
  ::closedir(d);
  std::sort(out.ids.begin(), out.ids.end());
  std::sort(out.others.begin(), out.others.end());
  std::sort(out.tombstones.begin(), out.tombstones.end());
  return out;
}

}  // namespace

ModelStore::ModelStore(std::string root) : root_(std::move(root)), dir_(root_ + "/" + kStoreFormat) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec || !std::filesystem::is_directory(dir_)) {
    throw std::runtime_error("cannot create the model store directory " + dir_ + ": " + ec.message());
  }
}

std::uint64_t ModelStore::recordBound(const Limits& limits) {
  return 2 * static_cast<std::uint64_t>(limits.max_message_bytes) + kRecordSlack;
}

std::string ModelStore::temporaryPath(const std::string& id) const {
  return dir_ + "/." + id + ".tmp." + uniqueSuffix();
}

FileStamp ModelStore::stamp(const std::string& id) const {
  struct stat st {};
  if (::lstat(path(id).c_str(), &st) != 0) return {};
  return stampOf(st);
}

StoreEntry ModelStore::read(const std::string& id, std::uint64_t max_bytes) const {
  const std::string p = path(id);
  StoreEntry e;
  auto bad = [&](std::string reason) {
    e.state = StoreEntry::State::Bad;
    e.reason = std::move(reason);
    e.bytes.clear();
    return e;
  };
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) {
    if (errno == ENOENT) return e;
    return bad("cannot look at it: " + std::string(std::strerror(errno)));
  }
  e.stamp = stampOf(st);
  if (!S_ISREG(st.st_mode)) return bad(notRegular(st.st_mode));
  {
    std::lock_guard lock(mutex_);
    if (auto it = bad_.find(id); it != bad_.end() && it->second.stamp == e.stamp)
      return bad(it->second.reason);
  }
  auto too_large = [&](const std::string& size) {
    return bad(size + " bytes, more than the " + std::to_string(max_bytes) +
               " a record can hold (--max-message-bytes plus " + std::to_string(kRecordSlack) + ")");
  };
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) return too_large(std::to_string(st.st_size));
  // O_NOFOLLOW: a link put in its place since is refused; O_NONBLOCK: a FIFO put there does not block
  const int fd = ::open(p.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return StoreEntry{};
    if (errno == ELOOP) return bad(notRegular(S_IFLNK));
    return bad("cannot open it: " + std::string(std::strerror(errno)));
  }
  struct stat fst {};
  if (::fstat(fd, &fst) != 0 || !S_ISREG(fst.st_mode)) {
    const mode_t mode = fst.st_mode;
    ::close(fd);
    return bad(notRegular(mode));
  }
  e.stamp = stampOf(fst);
  const std::uint64_t expected = static_cast<std::uint64_t>(fst.st_size);
  if (expected > max_bytes) {
    ::close(fd);
    return too_large(std::to_string(expected));
  }
  // at most max_bytes + 1: a file that grew past the bound is noticed, and not read further
  e.bytes.resize(static_cast<std::size_t>(
      std::min<std::uint64_t>(std::max<std::uint64_t>(expected, 4096), max_bytes + 1)));
  std::size_t got = 0;
  for (;;) {
    if (got == e.bytes.size()) {
      if (got > max_bytes) break;
      e.bytes.resize(static_cast<std::size_t>(std::min<std::uint64_t>(2 * got, max_bytes + 1)));
    }
    const ssize_t r = ::read(fd, e.bytes.data() + got, e.bytes.size() - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      const std::string why = "cannot read it: " + std::string(std::strerror(errno));
      ::close(fd);
      return bad(why);
    }
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  ::close(fd);
  if (got > max_bytes)
    return bad("grew past the " + std::to_string(max_bytes) + " bytes a record can hold while read");
  if (got == 0) return bad("empty");
  e.bytes.resize(got);
  e.state = StoreEntry::State::Regular;
  return e;
}

std::string ModelStore::writeTemporary(const std::string& id, const std::string& bytes) const {
  const std::string tmp = temporaryPath(id);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) fail(ErrorCode::Unavailable, "model store: " + errnoText("cannot create", tmp));
  if (!writeAll(fd, bytes.data(), bytes.size()) || ::fsync(fd) != 0) {
    const std::string msg = errnoText("cannot write", tmp);
    ::close(fd);
    ::unlink(tmp.c_str());
    fail(ErrorCode::Unavailable, "model store: " + msg);
  }
  if (::close(fd) != 0) {
    const std::string msg = errnoText("cannot write", tmp);
    ::unlink(tmp.c_str());
    fail(ErrorCode::Unavailable, "model store: " + msg);
  }
  return tmp;
}

void ModelStore::syncDirectory() const {
  // makes links, renames and removals in the directory durable
  const int dfd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

bool ModelStore::create(const std::string& id, const std::string& bytes) const {
  const std::string final_path = path(id);
  if (stamp(id).exists) return false;
  const std::string tmp = writeTemporary(id, bytes);
  // link, not rename: when another writer got there first its file stays (and with it its owner)
  bool wrote = true;
  if (::link(tmp.c_str(), final_path.c_str()) != 0) {
    if (errno == EEXIST) {
      wrote = false;
    } else if (errno == EPERM || errno == ENOTSUP || errno == EOPNOTSUPP || errno == EMLINK) {
      // a file system without hard links: a rename that does not replace, else a plain rename (the last of
      // two racing writers wins there; both wrote the same model)
      if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, final_path.c_str(), RENAME_NOREPLACE) != 0) {
        if (errno == EEXIST) {
          wrote = false;
        } else if (errno != EINVAL || ::rename(tmp.c_str(), final_path.c_str()) != 0) {
          const std::string msg = errnoText("cannot rename", tmp);
          ::unlink(tmp.c_str());
          fail(ErrorCode::Unavailable, "model store: " + msg);
        }
      }
    } else {
      const std::string msg = errnoText("cannot link", tmp);
      ::unlink(tmp.c_str());
      fail(ErrorCode::Unavailable, "model store: " + msg);
    }
  }
  ::unlink(tmp.c_str());  // gone already after a rename
  if (wrote) syncDirectory();
  noteOwn(id, true);  // this server's record, or another's in place
  return wrote;
}

bool ModelStore::replace(const std::string& id, const std::string& bytes, const FileStamp& bad) const {
  const std::string final_path = path(id);
  const std::string tmp = writeTemporary(id, bytes);
  auto give_up = [&](const std::string& msg) {
    ::unlink(tmp.c_str());
    fail(ErrorCode::Unavailable, "model store: " + msg);
  };
  bool wrote = false;
  {
    const StripeLock lock(dir_, id);
    const FileStamp now = stamp(id);
    if (now != bad) {
      ::unlink(tmp.c_str());
      return false;  // changed meanwhile: the caller looks again
    }
    if (now.exists && S_ISDIR(now.mode)) {
      // rename cannot replace a directory by a file: move it aside (its content is not ours to delete)
      const std::string aside = dir_ + "/." + id + ".bad." + uniqueSuffix();
      if (::rename(final_path.c_str(), aside.c_str()) != 0)
        give_up(errnoText("cannot move aside", final_path));
      spdlog::warn("model store: moved the directory {} aside to {}", escaped(final_path, 512),
                   escaped(aside, 512));
    }
    if (!now.exists || S_ISDIR(now.mode)) {
      if (::link(tmp.c_str(), final_path.c_str()) == 0) {
        wrote = true;
      } else if (errno != EEXIST) {
        give_up(errnoText("cannot link", tmp));
      }
    } else {
      if (::rename(tmp.c_str(), final_path.c_str()) != 0) give_up(errnoText("cannot rename", tmp));
      wrote = true;
    }
    ::unlink(tmp.c_str());  // gone already after a rename
    syncDirectory();
  }
  if (wrote) {
    {
      std::lock_guard lock(mutex_);
      bad_.erase(id);
    }
    noteOwn(id, true);
  }
  return wrote;
}

bool ModelStore::remove(const std::string& id) const {
  if (::unlink(path(id).c_str()) != 0) {
    if (errno == ENOENT) return false;
    fail(ErrorCode::Unavailable, "model store: " + errnoText("cannot remove", path(id)));
  }
  syncDirectory();
  {
    std::lock_guard lock(mutex_);
    bad_.erase(id);
  }
  noteOwn(id, false);
  return true;
}

void ModelStore::bury(const std::string& id) const {
  const std::string p = tombstonePath(id);
  // O_NONBLOCK: a FIFO put there does not block; O_NOFOLLOW: a link is not followed
  const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || ::futimens(fd, nullptr) != 0) {
    const std::string why = fd < 0 ? errnoText("cannot write the tombstone", p)
                                   : "cannot write the tombstone " + escaped(p, 512) + ": not a regular file";
    if (fd >= 0) ::close(fd);
    spdlog::warn("model store: {}; the deletion of {} goes on without it (clients may register it again)",
                 why, id);
    return;
  }
  ::close(fd);
}

bool ModelStore::buried(const std::string& id) const {
  struct stat st {};
  if (::lstat(tombstonePath(id).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  return ageNanos(st) < std::chrono::duration_cast<std::chrono::nanoseconds>(kTombstoneAge).count();
}

std::size_t ModelStore::removeOldTombstones(std::chrono::seconds max_age) const {
  std::size_t removed = 0;
  const std::int64_t max_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(max_age).count();
  for (const std::string& id : list().tombstones) {
    const std::string p = tombstonePath(id);
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || ageNanos(st) < max_ns) continue;
    if (::unlink(p.c_str()) == 0) ++removed;
  }
  if (removed > 0)
    spdlog::info("model store: removed {} tombstones older than {} s", removed, max_age.count());
  return removed;
}

void ModelStore::noteOwn(const std::string& id, bool present) const {
  std::lock_guard lock(listing_mutex_);
  if (!listing_) return;
  auto it = std::lower_bound(listing_->begin(), listing_->end(), id);
  const bool listed = it != listing_->end() && *it == id;
  if (listed == present) return;
  auto copy = std::make_shared<std::vector<std::string>>(*listing_);
  auto at = copy->begin() + (it - listing_->begin());
  if (present) {
    copy->insert(at, id);
  } else {
    copy->erase(at);
  }
  listing_ = std::move(copy);
}

std::shared_ptr<const std::vector<std::string>> ModelStore::recentIds(
    std::chrono::milliseconds max_age) const {
  std::lock_guard lock(listing_mutex_);
  const auto now = std::chrono::steady_clock::now();
  if (!listing_ || now - listed_at_ >= max_age) {
    StoreListing fresh = list();  // under the lock: this server's writes meanwhile wait, then apply
    listing_ = std::make_shared<const std::vector<std::string>>(std::move(fresh.ids));
    listed_at_ = std::chrono::steady_clock::now();
    if (!fresh.tombstones.empty() && listed_at_ - swept_at_ > kTombstoneSweep) {
      swept_at_ = listed_at_;
      removeOldTombstones(kTombstoneAge);
    }
  }
  return listing_;
}

StoreListing ModelStore::list() const { return listDirectory(dir_); }

std::vector<std::string> ModelStore::ids() const { return list().ids; }

std::pair<std::size_t, std::uint64_t> ModelStore::usage() const {
  std::size_t files = 0;
  std::uint64_t bytes = 0;
  for (const std::string& id : *recentIds()) {
    struct stat st {};
    if (::lstat(path(id).c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      ++files;
      bytes += static_cast<std::uint64_t>(st.st_size);
    }
  }
  return {files, bytes};
}

bool ModelStore::reportBad(const std::string& id, const FileStamp& stamp, const std::string& reason) const {
  {
    std::lock_guard lock(mutex_);
    auto it = bad_.find(id);
    if (it != bad_.end() && it->second.stamp == stamp) return false;
    if (it == bad_.end() && bad_.size() >= kMaxVerdicts) bad_.clear();
    bad_[id] = Verdict{stamp, reason};
  }
  spdlog::error("model store: {} skipped: {}", escaped(path(id), 512), escaped(reason, 512));
  return true;
}

std::size_t ModelStore::removeStaleTemporaries(std::chrono::seconds min_age) const {
  return removeStaleTemporariesIn(dir_, list().temporaries, min_age);
}

std::size_t ModelStore::removeStaleTemporariesIn(const std::string& dir,
                                                 const std::vector<std::string>& names,
                                                 std::chrono::seconds min_age) {
  std::size_t removed = 0;
  const std::int64_t min_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(min_age).count();
  for (const std::string& name : names) {
    const std::string p = dir + "/" + name;
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) continue;
    const std::int64_t age_ns = ageNanos(st);
    if (age_ns < min_ns) continue;  // maybe a live writer's, on this server or another
    if (::unlink(p.c_str()) == 0) {
      ++removed;
      spdlog::info("model store: removed {}, a temporary file left by a crash (last written {} s ago)",
                   escaped(p, 512), age_ns / 1000000000);
    } else if (errno != ENOENT) {
      spdlog::warn("model store: {}", errnoText("cannot remove the stale temporary file", p));
    }
  }
  return removed;
}

namespace {

/// How a rename that replaces nothing ended.
enum class Moved { Done, Exists, Gone, Failed };

/// Renames from to `to` unless `to` exists (renameat2 with RENAME_NOREPLACE; where the file system has no
/// such rename, a link then an unlink of `from`, which replaces nothing either). Gone: `from` is not there
/// (another replica moved it first). Failed: errno says why.
Moved renameNoReplace(const std::string& from, const std::string& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return Moved::Done;
  if (errno == EINVAL || errno == ENOSYS) {
    if (::link(from.c_str(), to.c_str()) == 0) {
      ::unlink(from.c_str());
      return Moved::Done;
    }
  }
  if (errno == ENOENT) return Moved::Gone;
  if (errno == EEXIST) return Moved::Exists;
  return Moved::Failed;
}

/// Whether name is a format's directory name: v and digits.
bool isFormatName(const std::string& name) {
  return name.size() >= 2 && name[0] == 'v' &&
         std::all_of(name.begin() + 1, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

StoreMove ModelStore::moveUnversioned() const {
  StoreMove moved;
  const StoreListing old = listDirectory(root_);
  // moves one entry of the unversioned layout; an entry of this format's directory in place wins
  auto move = [&](const std::string& name, std::size_t& count) {
    const std::string from = root_ + "/" + name;
    const std::string to = dir_ + "/" + name;
    switch (renameNoReplace(from, to)) {
      case Moved::Done:
        ++count;
        return;
      case Moved::Gone:
        return;  // another replica moved it
      case Moved::Exists: {
        struct stat a {
        }, b{};
        // the same file (linked by a replica moving it where rename cannot replace nothing): nothing is lost
        if (::lstat(from.c_str(), &a) == 0 && ::lstat(to.c_str(), &b) == 0 && a.st_dev == b.st_dev &&
            a.st_ino == b.st_ino) {
          ::unlink(from.c_str());
          return;
        }
        if (name.ends_with(".deleted")) {  // a tombstone is in place: the older one says nothing more
          if (::unlink(from.c_str()) == 0) ++count;
          return;
        }
        ++moved.left;
        spdlog::warn("model store: {} of the unversioned layout is left where it is: {} is in place and wins",
                     escaped(from, 512), escaped(to, 512));
        return;
      }
      case Moved::Failed:
        ++moved.left;
        spdlog::warn("model store: {}", errnoText("cannot move " + escaped(from, 512) + " to", to));
        return;
    }
  };
  // by id, records and tombstones together: replicas starting at once go through them in the same order
  std::vector<std::string> names;
  for (const std::string& id : old.ids) names.push_back(id + ".pb");
  for (const std::string& id : old.tombstones) names.push_back(id + ".deleted");
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) move(name, name.ends_with(".pb") ? moved.records : moved.tombstones);
  // a temporary file of the unversioned layout is never a record: a stale one is a crash's, a young one a
  // live writer's of that layout (it links its record beside it, moved by the next start)
  removeStaleTemporariesIn(root_, old.temporaries, kStaleTemporaryAge);
  if (moved.records + moved.tombstones + moved.left > 0)
    spdlog::info(
        "model store: moved {} records and {} tombstones of the unversioned layout from {} into {}{}",
        moved.records, moved.tombstones, escaped(root_, 512), escaped(dir_, 512),
        moved.left ? " (" + std::to_string(moved.left) + " left where they were)" : "");
  for (const std::string& name : old.others) {
    if (isFormatName(name) && name != kStoreFormat)
      spdlog::info("model store: {} holds the records of another format ({}); left alone",
                   escaped(root_ + "/" + name, 512), escaped(name, 64));
  }
  return moved;
}

}  // namespace denoc::server
