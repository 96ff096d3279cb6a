// What the tool's options name: the states of --states or of the vector options, and the model file MODEL.
#include <iostream>

#include "commands.hpp"

namespace denoc::cli {

std::vector<State> readStateOptions(const Options& o, int n, unsigned fields) {
  if (!o.states.empty()) {
    if (!o.q.empty() || !o.qd.empty() || !o.qdd.empty() || !o.tau.empty()) {
      throw InputError("--states cannot be combined with --q, --qd, --qdd or --tau");
    }
    return readStates(o.states, n, fields, std::cerr);
  }
  State s;
  s.q = vectorOption(o.q, n, "--q");
  s.qd = vectorOption(o.qd, n, "--qd");
  s.qdd = vectorOption(o.qdd, n, "--qdd");
  s.tau = vectorOption(o.tau, n, "--tau");
  return {s};
}

Model loadModel(const Options& o) {
  UrdfOptions urdf;
  urdf.base_link = o.base_link;
  urdf.tip_link = o.tip_link;
  return loadModel(o.model, urdf);
}

}  // namespace denoc::cli
