// The documentation's tables of files and directories against what the build and the repository hold, so
// that they cannot drift apart again:
//  - docs/service.md, "Thread model": the table of server/src/ (`name.*` for a header and its source, or a
//    file's full name) names every file of the server's targets (the build's list, server/CMakeLists.txt),
//    and nothing else;
//  - README.md, "Layout": every directory it names exists, and every directory of the repository is named,
//    itself or, where the table goes one level down (clients/), each of its subdirectories.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/read_file.hpp"

namespace {

namespace fs = std::filesystem;

using denoc::testing::readFile;

/// The first column of the markdown table whose header row is `header`: the `code` spans of each row.
std::vector<std::vector<std::string>> tableColumn(const std::string& text, const std::string& header) {
  std::vector<std::vector<std::string>> rows;
  const std::size_t at = text.find(header);
  if (at == std::string::npos) return rows;
  std::istringstream in(text.substr(at));
  std::string line;
  std::getline(in, line);  // the header
  std::getline(in, line);  // |---|---|
  while (std::getline(in, line) && line.rfind('|', 0) == 0) {
    const std::size_t end = line.find('|', 1);
    const std::string cell = line.substr(1, end - 1);
    std::vector<std::string> names;
    for (std::size_t open = cell.find('`'); open != std::string::npos; open = cell.find('`', open)) {
      const std::size_t close = cell.find('`', open + 1);
      if (close == std::string::npos) break;
      names.push_back(cell.substr(open + 1, close - open - 1));
      open = close + 1;
    }
    rows.push_back(names);
  }
  return rows;
}

std::set<std::string> split(const std::string& list, char sep) {
  std::set<std::string> out;
  std::istringstream in(list);
  for (std::string item; std::getline(in, item, sep);) {
    if (!item.empty()) out.insert(item);
  }
  return out;
}

TEST(Docs, TheServiceFileTableNamesEveryFileOfTheServerBuildAndNothingElse) {
  const std::string text = readFile(fs::path(DENOC_SOURCE_DIR) / "docs" / "service.md");
  const auto rows = tableColumn(text, "| file | holds |");
  ASSERT_FALSE(rows.empty()) << "docs/service.md has no '| file | holds |' table";
  // the build's files of server/src, by name
  std::set<std::string> built;
  for (const std::string& path : split(DENOC_SERVER_FILES, '|')) {
    ASSERT_EQ(path.rfind("src/", 0), 0u) << path << ": a server file outside server/src";
    built.insert(path.substr(4));
  }
  ASSERT_GT(built.size(), 20u);
  std::set<std::string> documented;
  for (const auto& names : rows) {
    ASSERT_FALSE(names.empty()) << "a row of the file table names no file";
    for (const std::string& name : names) {
      // `stem.*`: the header and the source of stem, whichever the build has (at least one)
      std::size_t matched = 0;
      if (name.size() > 2 && name.compare(name.size() - 2, 2, ".*") == 0) {
        const std::string stem = name.substr(0, name.size() - 1);
        for (const std::string& file : built) {
          if (file.rfind(stem, 0) == 0 && file.find('.', stem.size()) == std::string::npos) {
            documented.insert(file);
            ++matched;
          }
        }
      } else if (built.count(name)) {
        documented.insert(name);
        ++matched;
      }
      EXPECT_GT(matched, 0u) << "docs/service.md names " << name
                             << ", which the server's build does not have";
    }
  }
  for (const std::string& file : built) {
    EXPECT_TRUE(documented.count(file)) << "server/src/" << file << " is not in docs/service.md's file table";
  }
  // and the build's list is the directory's: no file of server/src is left out of the targets
  for (const auto& entry : fs::directory_iterator(fs::path(DENOC_SOURCE_DIR) / "server" / "src")) {
    EXPECT_TRUE(built.count(entry.path().filename().string()))
        << entry.path() << " is in server/src but in none of the server's targets";
  }
}

TEST(Docs, TheReadmeLayoutTableNamesEveryDirectory) {
  const fs::path root(DENOC_SOURCE_DIR);
  const auto rows = tableColumn(readFile(root / "README.md"), "| path | what |");
  ASSERT_FALSE(rows.empty()) << "README.md has no '| path | what |' table";
  std::set<std::string> named;  // without the trailing slash
  for (const auto& names : rows) {
    ASSERT_EQ(names.size(), 1u) << "a layout row names one directory";
    std::string dir = names[0];
    if (!dir.empty() && dir.back() == '/') dir.pop_back();
    EXPECT_TRUE(fs::is_directory(root / dir))
        << "README.md names " << names[0] << ", which is not a directory";
    named.insert(dir);
  }
  // what the build and the programs make in the checkout (.gitignore's top-level directories): the build
  // trees, deploy/start.sh's default store, scratch space; none is part of the layout
  const auto visible = [](const fs::path& p) {
    const std::string name = p.filename().string();
    return !name.empty() && name[0] != '.' && name != "build" && name.rfind("build-", 0) != 0 &&
           name != "denoc-store" && name != "tmp";
  };
  for (const auto& top : fs::directory_iterator(root)) {
    if (!top.is_directory() || !visible(top.path())) continue;
    const std::string dir = top.path().filename().string();
    if (named.count(dir)) continue;
    // not named itself: every subdirectory must be
    bool any = false;
    for (const auto& sub : fs::directory_iterator(top.path())) {
      if (!sub.is_directory() || !visible(sub.path())) continue;
      any = true;
      const std::string path = dir + "/" + sub.path().filename().string();
      EXPECT_TRUE(named.count(path)) << path << " is not in README.md's layout table";
    }
    EXPECT_TRUE(any) << dir << " is not in README.md's layout table";
  }
}

}  // namespace
