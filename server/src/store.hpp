// The model store: every registration request, as protobuf binary, in one file per model id
// (<dir>/<id>.pb). Writes are atomic (temporary file, fsync, rename, fsync of the directory), so a crash
// leaves either the whole file or none; several servers may share one directory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace denoc::server {

class ModelStore {
 public:
  /// Creates the directory if missing. Throws std::runtime_error when it cannot.
  explicit ModelStore(std::string dir);

  const std::string& dir() const { return dir_; }

  /// Writes the bytes for id unless a file for id exists already (the first writer wins, also between
  /// replicas sharing the directory). Returns whether this call wrote it. Throws RequestError(Unavailable)
  /// on an I/O error (nothing is left behind but, at worst, a temporary file that loading ignores).
  bool put(const std::string& id, const std::string& bytes) const;

  /// The bytes stored for id, or nothing.
  std::optional<std::string> get(const std::string& id) const;

  /// Removes id's file; false if there was none. Throws RequestError(Unavailable) when the file cannot be
  /// removed (a read-only store).
  bool remove(const std::string& id) const;

  /// Ids of every stored model (file names that are valid ids), sorted.
  std::vector<std::string> ids() const;

  /// Model files and their total size in bytes.
  std::pair<std::size_t, std::uint64_t> usage() const;

 private:
  std::string path(const std::string& id) const { return dir_ + "/" + id + ".pb"; }
  std::string dir_;
};

}  // namespace denoc::server
