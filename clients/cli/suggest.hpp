// "Did you mean": the names nearest to a mistyped one (a model name on the server, an option of a command).
#pragma once

#include <string>
#include <vector>

namespace denoc::cli {

/// Levenshtein distance of two short strings (names).
std::size_t editDistance(const std::string& a, const std::string& b);

/// " (did you mean 'a', 'b'?)" naming the candidates nearest to `name` (at most 3, within an edit distance of
/// max(2, a third of its length), nearest first), or "" when none is that near.
std::string didYouMean(const std::string& name, const std::vector<std::string>& candidates);

}  // namespace denoc::cli
