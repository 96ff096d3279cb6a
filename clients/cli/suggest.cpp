#include "suggest.hpp"

#include <algorithm>
#include <utility>

namespace denoc::cli {

std::size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0u : 1u)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string didYouMean(const std::string& name, const std::vector<std::string>& candidates) {
  std::vector<std::pair<std::size_t, std::string>> near;
  for (const std::string& c : candidates) {
    const std::size_t d = editDistance(name, c);
    if (d <= std::max<std::size_t>(2, name.size() / 3)) near.emplace_back(d, c);
  }
  std::sort(near.begin(), near.end());
  near.erase(std::unique(near.begin(), near.end()), near.end());
  std::string hint;
  for (std::size_t k = 0; k < near.size() && k < 3; ++k)
    hint += (k ? "', '" : " (did you mean '") + near[k].second;
  if (!hint.empty()) hint += "'?)";
  return hint;
}

}  // namespace denoc::cli
