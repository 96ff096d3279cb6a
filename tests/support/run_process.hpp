// Runs a program as a process for the tests, with its standard output and error captured.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace denoc::testing {

/// A word quoted for /bin/sh.
inline std::string shellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

struct ProcessOutcome {
  int code = -1;  // exit code; 128 + signal when killed by one
  std::string out, err;
};

/// Runs `program args...` with no standard input; its output goes through the files `stem.out` and
/// `stem.err` (stem: a path in a scratch directory the caller owns).
inline ProcessOutcome runProcess(const std::string& program, const std::vector<std::string>& args,
                                 const std::string& stem) {
  const std::string out = stem + ".out";
  const std::string err = stem + ".err";
  std::string cmd = shellQuote(program);
  for (const std::string& a : args) cmd += ' ' + shellQuote(a);
  cmd += " >" + shellQuote(out) + " 2>" + shellQuote(err) + " </dev/null";
  const int status = std::system(cmd.c_str());
  const auto slurp = [](const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  ProcessOutcome r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

}  // namespace denoc::testing
