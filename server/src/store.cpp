#include "store.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>
#include <stdexcept>

#include "errors.hpp"
#include "model_source.hpp"

namespace denoc::server {

namespace {

std::string errnoText(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
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

}  // namespace

ModelStore::ModelStore(std::string dir) : dir_(std::move(dir)) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec || !std::filesystem::is_directory(dir_)) {
    throw std::runtime_error("cannot create the model store directory " + dir_ + ": " + ec.message());
  }
}

bool ModelStore::put(const std::string& id, const std::string& bytes) const {
  const std::string final_path = path(id);
  if (::access(final_path.c_str(), F_OK) == 0) return false;
  const std::string tmp = dir_ + "/." + id + ".tmp." + uniqueSuffix();
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) fail(ErrorCode::Unavailable, "model store: " + errnoText("cannot create", tmp));
  if (!writeAll(fd, bytes.data(), bytes.size()) || ::fsync(fd) != 0) {
    const std::string msg = errnoText("cannot write", tmp);
    ::close(fd);
    ::unlink(tmp.c_str());
    fail(ErrorCode::Unavailable, "model store: " + msg);
  }
  ::close(fd);
  // link, not rename: when another writer got there first its file stays (and with it its owner)
  bool wrote = true;
  if (::link(tmp.c_str(), final_path.c_str()) != 0) {
    if (errno == EEXIST) {
      wrote = false;
    } else if (errno == EPERM || errno == ENOTSUP || errno == EOPNOTSUPP || errno == EMLINK) {
      // a file system without hard links: rename (the last of two racing writers wins)
      if (::rename(tmp.c_str(), final_path.c_str()) != 0) {
        const std::string msg = errnoText("cannot rename", tmp);
        ::unlink(tmp.c_str());
        fail(ErrorCode::Unavailable, "model store: " + msg);
      }
    } else {
      const std::string msg = errnoText("cannot link", tmp);
      ::unlink(tmp.c_str());
      fail(ErrorCode::Unavailable, "model store: " + msg);
    }
  }
  ::unlink(tmp.c_str());
  // make the rename durable
  const int dfd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return wrote;
}

std::optional<std::string> ModelStore::get(const std::string& id) const {
  const std::string p = path(id);
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t r = ::read(fd, buf, sizeof buf);
    if (r < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return std::nullopt;
    }
    if (r == 0) break;
    out.append(buf, static_cast<std::size_t>(r));
  }
  ::close(fd);
  return out;
}

bool ModelStore::remove(const std::string& id) const {
  if (::unlink(path(id).c_str()) != 0) {
    if (errno == ENOENT) return false;
    fail(ErrorCode::Unavailable, "model store: " + errnoText("cannot remove", path(id)));
  }
  const int dfd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return true;
}

std::vector<std::string> ModelStore::ids() const {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir_.c_str());
  if (!d) return out;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() == 67 && name.ends_with(".pb")) {
      std::string id = name.substr(0, 64);
      if (isModelId(id)) out.push_back(std::move(id));
    }
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::pair<std::size_t, std::uint64_t> ModelStore::usage() const {
  std::size_t files = 0;
  std::uint64_t bytes = 0;
  for (const std::string& id : ids()) {
    struct stat st {};
    if (::stat(path(id).c_str(), &st) == 0) {
      ++files;
      bytes += static_cast<std::uint64_t>(st.st_size);
    }
  }
  return {files, bytes};
}

}  // namespace denoc::server
