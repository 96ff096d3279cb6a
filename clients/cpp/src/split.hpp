// Batches above the server's max_states: the pieces of a split batch and the joining of their answers, in
// order (used by the dynamics and the planning calls; Client::chunks gives the row ranges).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <iterator>
#include <vector>

#include "denoc/client/types.hpp"

namespace denoc::client::split {

/// A matrix's rows [first, first + size), or the empty matrix as it is (an absent optional input).
inline Eigen::MatrixXd rowsOf(const Eigen::MatrixXd& m, Eigen::Index first, Eigen::Index size) {
  return m.size() == 0 ? m : Eigen::MatrixXd(m.middleRows(first, size));
}

/// Whether every wrench has one row per state (count) or one row for all (1): a batch that can be split.
inline bool wrenchesFit(const std::vector<LinkWrench>& wrenches, Eigen::Index count) {
  return std::all_of(wrenches.begin(), wrenches.end(), [&](const LinkWrench& w) {
    return w.wrench.cols() == 6 && (w.wrench.rows() == count || w.wrench.rows() == 1);
  });
}

/// The wrenches of rows [first, first + size) of a batch of count states: a wrench per state is cut, one
/// shared by every state goes whole.
inline std::vector<LinkWrench> wrenchesOf(const std::vector<LinkWrench>& wrenches, Eigen::Index count,
                                          Eigen::Index first, Eigen::Index size) {
  std::vector<LinkWrench> out = wrenches;
  for (LinkWrench& w : out) {
    if (w.wrench.rows() == count && count != 1) w.wrench = Eigen::MatrixXd(w.wrench.middleRows(first, size));
  }
  return out;
}

/// The parts' rows one after the other (the empty matrix when the parts are empty).
inline Eigen::MatrixXd stackRows(const std::vector<Eigen::MatrixXd>& parts) {
  Eigen::Index rows = 0, cols = 0;
  for (const auto& p : parts) {
    rows += p.rows();
    cols = std::max(cols, p.cols());
  }
  if (rows == 0) return {};
  Eigen::MatrixXd out(rows, cols);
  Eigen::Index at = 0;
  for (const auto& p : parts) {
    if (p.rows() == 0) continue;
    out.middleRows(at, p.rows()) = p;
    at += p.rows();
  }
  return out;
}

/// Moves from's items after to's (the per-state matrices of a split batch's parts, in order).
template <typename T>
void moveAppend(std::vector<T>& to, std::vector<T>& from) {
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

/// The answer of a split batch: the first part's model and gravity, the parts' compute times summed.
inline void joinInfo(AnswerInfo& into, const AnswerInfo& part, bool first) {
  if (first) {
    into.model_id = part.model_id;
    into.gravity = part.gravity;
  }
  into.compute_time += part.compute_time;
}

}  // namespace denoc::client::split
