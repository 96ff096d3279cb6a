// The model store: every registration request, as protobuf binary, in one file per model id
// (<dir>/<id>.pb), where <dir> is the format's subdirectory of the store directory (<store-dir>/v1,
// kStoreFormat), so that another format can be written beside it while replicas of both run. Only regular
// files are read (never a link, FIFO, device or directory, and never more than a bound), so nothing placed in
// the directory can block, crash or exhaust the server. Writes are atomic (temporary file, fsync, link or
// rename, fsync of the directory), so a crash leaves either the whole file or none; several servers may share
// one directory. What a record holds is judged by the registry (it builds the model and checks the id); the
// store keeps the verdicts so that a bad entry is logged once and not read again until it changes. A deletion
// leaves a tombstone (<dir>/<id>.deleted, empty) for a day, so that every replica can tell a deleted model
// from one it never had. The directory's listing is kept for kListingAge (this server's own writes applied at
// once), for ListModels and the metrics. docs/service.md, "Store".
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "limits.hpp"

namespace denoc::server {

/// The format of the records this server reads and writes, and the subdirectory of the store directory that
/// holds them (<store-dir>/v1). Bump it, never the records in place, when a record changes in a way that
/// servers of this format would misread (docs/service.md, "Store", "Formats").
inline constexpr const char* kStoreFormat = "v1";

/// What lstat says about a store entry: enough to notice that it changed between two looks (a rename puts
/// another inode in place, a rewrite changes the size or the times).
struct FileStamp {
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  mode_t mode = 0;
  off_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};

/// A store entry as read.
struct StoreEntry {
  enum class State {
    Absent,   // no entry for the id
    Regular,  // a regular file within the bound: bytes holds it (whether it is a good record is not judged)
    Bad,      // something that cannot be a record: reason says what
  };
  State state = State::Absent;
  std::string bytes;
  std::string reason;
  FileStamp stamp;
};

/// The directory's entries by kind.
struct StoreListing {
  std::vector<std::string> ids;          // names <id>.pb (any file type), as ids, sorted
  std::vector<std::string> temporaries;  // names .<id>.tmp.*
  std::vector<std::string> tombstones;   // names <id>.deleted, as ids, sorted
  std::vector<std::string> others;       // anything else but the lock file and quarantined entries
};

/// What moveUnversioned() did.
struct StoreMove {
  std::size_t records = 0;     // <id>.pb moved into the format's directory
  std::size_t tombstones = 0;  // <id>.deleted moved (or dropped: one was in place already)
  std::size_t left = 0;  // entries left where they were (the format's directory has its own, or an error)
};

class ModelStore {
 public:
  /// Creates the store directory and its format's subdirectory (<root>/kStoreFormat) if missing. Throws
  /// std::runtime_error when it cannot.
  explicit ModelStore(std::string root);

  /// The directory of this format's records, <root>/kStoreFormat.
  const std::string& dir() const { return dir_; }
  std::string path(const std::string& id) const { return dir_ + "/" + id + ".pb"; }

  /// The largest record a server with these limits reads: a request of max_message_bytes, its description
  /// (kept only when it fits max_message_bytes) and room for the owner field. A larger file cannot hold a
  /// registration this server would accept.
  static std::uint64_t recordBound(const Limits& limits);

  /// id's entry. Only a regular file is opened (lstat first, then open with O_NOFOLLOW | O_NONBLOCK |
  /// O_CLOEXEC and fstat of the same inode), and at most max_bytes of it are read: a link (dangling or not),
  /// directory, FIFO, device, socket, an empty, unreadable or larger file is Bad with the reason, without
  /// blocking. An entry reported bad (reportBad) and unchanged since is Bad again without being read.
  StoreEntry read(const std::string& id, std::uint64_t max_bytes) const;

  /// lstat of id's entry (exists = false when there is none).
  FileStamp stamp(const std::string& id) const;

  /// Writes bytes as id's record when there is no entry for id: a temporary file (written, fsynced) linked
  /// to <id>.pb, so the first writer wins, also between replicas sharing the directory; then the directory
  /// is fsynced. Returns false, writing nothing, when an entry exists. Throws RequestError(Unavailable) on an
  /// I/O error (nothing is left behind but, at worst, a temporary file).
  bool create(const std::string& id, const std::string& bytes) const;

  /// Replaces id's bad entry by bytes, atomically (temporary file, fsync, rename over it; a directory is
  /// first moved aside to .<id>.bad.<suffix>), then fsyncs the directory. Under a lock shared with the other
  /// replicas (a byte of <dir>/.lock, by id), the entry must still carry the stamp `bad`: returns false,
  /// writing nothing, when it changed meanwhile. Throws RequestError(Unavailable) on an I/O error.
  bool replace(const std::string& id, const std::string& bytes, const FileStamp& bad) const;

  /// Removes id's entry (not a directory); false if there was none. Throws RequestError(Unavailable) when it
  /// cannot be removed (a read-only store).
  bool remove(const std::string& id) const;

  /// Leaves (or renews) id's tombstone, <dir>/<id>.deleted: written before a deletion removes the record,
  /// so that a crash between the two leaves the model registered. A tombstone that cannot be written is
  /// logged and the deletion goes on (clients may then register the model again). A record in place wins
  /// over a tombstone: a registration does not remove it.
  void bury(const std::string& id) const;

  /// Whether id has a tombstone younger than kTombstoneAge (a regular file; anything else is not one).
  bool buried(const std::string& id) const;

  /// Removes tombstones older than max_age; returns how many were removed.
  std::size_t removeOldTombstones(std::chrono::seconds max_age) const;

  /// Ids of every entry named like a record, sorted.
  std::vector<std::string> ids() const;

  /// The same, from a listing at most kListingAge old, with this server's own writes and removals applied
  /// at once (so it never misses what this server stored). Every kTombstoneSweep, a refresh also removes
  /// old tombstones.
  /// max_age: the oldest listing taken (0: list the directory now).
  std::shared_ptr<const std::vector<std::string>> recentIds(
      std::chrono::milliseconds max_age = kListingAge) const;

  /// The directory's entries by kind.
  StoreListing list() const;

  /// Regular files named like records (recentIds) and their total size in bytes.
  std::pair<std::size_t, std::uint64_t> usage() const;

  /// Logs a bad entry at error with the reason, once per state of the entry (a changed entry is reported
  /// again), and remembers the verdict so that read() does not read it again. Returns whether it logged.
  bool reportBad(const std::string& id, const FileStamp& stamp, const std::string& reason) const;

  /// Removes temporary files (.<id>.tmp.*) last modified more than min_age ago: left by a crash, since a
  /// writer links or removes its own within its call. Younger ones may belong to a live replica sharing the
  /// directory and stay. Logs each removal; returns how many were removed.
  std::size_t removeStaleTemporaries(std::chrono::seconds min_age) const;

  /// At start: moves the records and tombstones of the unversioned layout (written directly in the store
  /// directory by servers before formats had directories) into the format's directory, each with a rename
  /// that replaces nothing, so that replicas starting at once on such a store each move what the other has
  /// not moved yet, and an entry of the format's directory wins (the unversioned one is then left, logged,
  /// unless it is the same file). Stale temporary files of that layout are removed, young ones (a live
  /// writer's) left; anything else (another format's directory, the lock file) is left alone. Logs what it
  /// moved and left, and the other formats' directories it saw.
  StoreMove moveUnversioned() const;

  /// Temporary files older than this are left by crashes (removeStaleTemporaries at start).
  static constexpr std::chrono::seconds kStaleTemporaryAge{300};
  /// How long a tombstone tells that a model was deleted.
  static constexpr std::chrono::seconds kTombstoneAge{86400};
  /// The oldest directory listing recentIds() answers from.
  static constexpr std::chrono::milliseconds kListingAge{500};
  static constexpr std::chrono::seconds kTombstoneSweep{600};

 private:
  static std::size_t removeStaleTemporariesIn(const std::string& dir, const std::vector<std::string>& names,
                                              std::chrono::seconds min_age);
  std::string temporaryPath(const std::string& id) const;
  std::string writeTemporary(const std::string& id, const std::string& bytes) const;
  void syncDirectory() const;
  std::string tombstonePath(const std::string& id) const { return dir_ + "/" + id + ".deleted"; }
  /// Applies this server's own write (present) or removal of id to the kept listing.
  void noteOwn(const std::string& id, bool present) const;

  std::string root_;
  std::string dir_;
  mutable std::mutex mutex_;
  struct Verdict {
    FileStamp stamp;
    std::string reason;
  };
  mutable std::unordered_map<std::string, Verdict> bad_;  // id -> last bad state reported
  // the kept listing: refreshed and changed under listing_mutex_, so that a write of this server applied
  // while a refresh reads the directory is applied to the refreshed listing too
  mutable std::mutex listing_mutex_;
  mutable std::shared_ptr<const std::vector<std::string>> listing_;
  mutable std::chrono::steady_clock::time_point listed_at_{};
  mutable std::chrono::steady_clock::time_point swept_at_{};
};

}  // namespace denoc::server
