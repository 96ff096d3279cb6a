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

// The bounds on a built model's size: nv (--max-dof) and its tree's depth (--max-depth).
void checkSize(const Model& model, const Limits& limits) {
  if (static_cast<std::uint64_t>(model.nv) > limits.max_dof) {
    fail(ErrorCode::ResourceExhausted, "the model has " + std::to_string(model.nv) +
                                           " velocity coordinates (dof), more than the limit max_dof = " +
                                           std::to_string(limits.max_dof) + " (--max-dof, DENOC_MAX_DOF)");
  }
  if (static_cast<std::uint64_t>(model.depth) > limits.max_depth) {
    fail(ErrorCode::ResourceExhausted,
         "the model's tree is " + std::to_string(model.depth) +
             " joints deep, more than the limit max_depth = " + std::to_string(limits.max_depth) +
             " (--max-depth, DENOC_MAX_DEPTH)");
  }
}

}  // namespace

BuiltModel buildFromRequest(const v1::RegisterModelRequest& request, const Limits& limits,
                            const StopCondition* stop) {
  validateRegisterModel(request, limits);
  if (request.source_case() == v1::RegisterModelRequest::kDh) {
    const DHSpec dh = toDHSpec(request);
    Model model = buildModel(specFromDH(dh, stop), stop);
    checkSize(model, limits);
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
  checkSize(model, limits);
  return finish(std::move(model), std::move(name), "urdf");
}

BuiltModel buildBuiltin(const DHSpec& dh) { return finish(buildModelFromDH(dh), dh.name, "builtin"); }

}  // namespace denoc::server
