// The tests' one way to read a whole file.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace denoc::testing {

/// The bytes of the file at path; std::runtime_error "cannot read PATH" when it cannot be opened (a test
/// that calls it fails with that message).
inline std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

}  // namespace denoc::testing
