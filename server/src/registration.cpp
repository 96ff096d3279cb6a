#include "registration.hpp"

#include <string>
#include <utility>
#include <vector>

#include "convert.hpp"
#include "denoc/urdf.hpp"
#include "errors.hpp"
#include "model_id.hpp"
#include "validate.hpp"

namespace denoc::server {

namespace {

BuiltModel finish(Model&& model, std::string name, std::string source) {
  BuiltModel b;
  b.id = modelId(model.spec);
  b.name = std::move(name);
  b.source = std::move(source);
  b.model = std::make_shared<const Model>(std::move(model));
  return b;
}

// The service computes on serial chains (docs/trees.md): a URDF that imports as a tree (branches, or a link
// with a singular inertia) is refused by name, with the chain a caller can register instead.
[[noreturn]] void refuseTree(const Model& model) {
  std::vector<bool> has_child(static_cast<std::size_t>(model.n), false);
  for (int i = 0; i < model.n; ++i) {
    if (const int p = model.parent[static_cast<std::size_t>(i)]; p >= 0)
      has_child[static_cast<std::size_t>(p)] = true;
  }
  std::string leaves;
  int count = 0;
  for (int i = 0; i < model.n; ++i) {
    if (has_child[static_cast<std::size_t>(i)]) continue;
    leaves += (count++ ? ", '" : "'") + model.spec.joints[static_cast<std::size_t>(i)].link + "'";
  }
  if (count > 1) {
    fail(ErrorCode::InvalidArgument,
         "the URDF is a kinematic tree with several leaf links (" + leaves +
             ") and this service computes on serial chains: choose the chain's end "
             "with tip_link");
  }
  fail(ErrorCode::InvalidArgument,
       "the URDF imports as a tree model (a massless link, a point mass or a thin rod on the chain) and this "
       "service computes on chains of links with positive-definite inertias (docs/trees.md)");
}

}  // namespace

BuiltModel buildFromRequest(const v1::RegisterModelRequest& request, const Limits& limits,
                            const StopCondition* stop) {
  validateRegisterModel(request, limits);
  if (request.source_case() == v1::RegisterModelRequest::kDh) {
    const DHSpec dh = toDHSpec(request);
    Model model = buildModel(specFromDH(dh, stop), stop);
    if (!model.serial) refuseTree(model);
    return finish(std::move(model), dh.name, "dh");
  }
  ModelSpec spec = specFromUrdf(request.urdf().text(), toUrdfOptions(request), stop);
  if (spec.joints.size() > limits.max_dof) {
    fail(ErrorCode::ResourceExhausted, "the URDF chain has " + std::to_string(spec.joints.size()) +
                                           " moving joints, more than the limit max_dof = " +
                                           std::to_string(limits.max_dof) + " (--max-dof, DENOC_MAX_DOF)");
  }
  std::string name = request.has_name() ? request.name() : spec.name;
  Model model = buildModel(spec, stop);
  if (!model.serial) refuseTree(model);
  return finish(std::move(model), std::move(name), "urdf");
}

BuiltModel buildBuiltin(const DHSpec& dh) { return finish(buildModelFromDH(dh), dh.name, "builtin"); }

}  // namespace denoc::server
