// A payload: a rigid body held rigidly by the tip (a tool, a grasped part), merged into the last link.
//
// attachPayload returns a new Model whose last link carries the composite rigid body (link plus payload:
// mass added, mass centres combined, inertias moved to the common mass centre by the parallel-axis theorem);
// the registered model is not touched. Every computation (dynamics, kinematics, derivatives, rollouts, the
// batches) then uses the payload by being called with that model. Its spec (ModelSpec) says the same: the
// last joint's mass, mass centre and inertia are the composite's, so it is the model a user would build by
// hand.
//
// Cost (docs/planning.md, measured): a copy of the model and a rebuild of the last link's constants, about
// 3 us for the 7-DOF Panda where a full buildModel takes about 20 us.
#pragma once

#include <Eigen/Core>

#include "denoc/model.hpp"

namespace denoc {

/// A rigid body attached to the tip frame.
struct Payload {
  double mass = 0.0;                                  // kg, finite, > 0
  Eigen::Vector3d com = Eigen::Vector3d::Zero();      // mass centre in the tip frame, m
  Eigen::Matrix3d inertia = Eigen::Matrix3d::Zero();  // about its mass centre, tip-frame axes, kg m^2;
                                                      // all zero: a point mass
};

/// Checks a payload as a link's inertial data are checked (checkInertia), except that an all-zero inertia is
/// accepted as a point mass. Throws std::invalid_argument naming the field ("payload: mass is -1, expected a
/// finite number > 0").
void checkPayload(const Payload& payload);

/// The spec with the payload merged into its last joint's link (in that link's frame).
ModelSpec specWithPayload(const ModelSpec& spec, const Payload& payload);

/// The model with the payload merged into its last link: a copy of `model` whose last link's constants are
/// rebuilt by buildModel (on a one-joint chain in that link's frame), equal to
/// buildModel(specWithPayload(model.spec, payload)) to rounding. Throws like checkPayload.
Model attachPayload(const Model& model, const Payload& payload);

}  // namespace denoc
