#include "registration.hpp"

#include <utility>

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

}  // namespace

BuiltModel buildFromRequest(const v1::RegisterModelRequest& request, const Limits& limits,
                            const StopCondition* stop) {
  validateRegisterModel(request, limits);
  if (request.source_case() == v1::RegisterModelRequest::kDh) {
    const DHSpec dh = toDHSpec(request);
    return finish(buildModel(specFromDH(dh, stop), stop), dh.name, "dh");
  }
  ModelSpec spec = specFromUrdf(request.urdf().text(), toUrdfOptions(request), stop);
  if (spec.joints.size() > limits.max_dof) {
    fail(ErrorCode::ResourceExhausted, "the URDF chain has " + std::to_string(spec.joints.size()) +
                                           " moving joints, more than the limit max_dof = " +
                                           std::to_string(limits.max_dof) + " (--max-dof, DENOC_MAX_DOF)");
  }
  std::string name = request.has_name() ? request.name() : spec.name;
  return finish(buildModel(spec, stop), std::move(name), "urdf");
}

BuiltModel buildBuiltin(const DHSpec& dh) { return finish(buildModelFromDH(dh), dh.name, "builtin"); }

}  // namespace denoc::server
