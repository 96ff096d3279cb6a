// A payload: a rigid body held rigidly by a frame of the robot (a tool or a grasped part at the tip, a
// battery on a link, a load on a floating base's trunk), merged into the link that carries that frame.
//
// attachPayload returns a new Model whose link carries the composite rigid body (link plus payload: mass
// added, mass centres combined, inertias moved to the common mass centre by the parallel-axis theorem); the
// registered model is not touched. Every computation (dynamics, kinematics, derivatives, rollouts, the
// batches) then uses the payload by being called with that model. Its spec (ModelSpec) says the same: the
// link's mass, mass centre and inertia (a joint's JointSpec, or root_mass, root_com and root_inertia for
// the root link) are the composite's, so it is the model a user would build by hand.
//
// The frame is a kinematic frame of frameIndex: a link (0..n-1), the tip (n; the two-argument forms) or
// the root link of a floating or planar root (n + 1); the payload is given in that frame's coordinates.
//
// Cost (docs/planning.md, measured): on a serial chain's tip or last link, a copy of the model and a
// rebuild of the last link's constants, about 3 us for the 7-DOF Panda where a full buildModel takes about
// 20 us; on any other link of a serial chain, and on every frame of a tree model, a full buildModel of the
// spec with the payload.
#pragma once

#include <Eigen/Core>

#include "denoc/model.hpp"

namespace denoc {

/// A rigid body attached to a frame (the tip frame for the two-argument forms).
struct Payload {
  double mass = 0.0;                                  // kg, finite, > 0
  Eigen::Vector3d com = Eigen::Vector3d::Zero();      // mass centre in the frame's coordinates, m
  Eigen::Matrix3d inertia = Eigen::Matrix3d::Zero();  // about its mass centre, the frame's axes, kg m^2;
                                                      // all zero: a point mass
};

/// Checks a payload as a link's inertial data are checked (checkInertia), except that an all-zero inertia is
/// accepted as a point mass. Throws std::invalid_argument naming the field ("payload: mass is -1, expected a
/// finite number > 0").
void checkPayload(const Payload& payload);

/// The spec with the payload at the tip merged into its last joint's link (in that link's frame); for a
/// floating or planar root without joints, into the root link. Same as specWithPayload(spec, payload, n).
ModelSpec specWithPayload(const ModelSpec& spec, const Payload& payload);

/// The spec with the payload, given in frame `frame`'s coordinates (frameIndex: 0..n-1 a link, n the tip,
/// n + 1 the root link), merged into the link that carries the frame: joint frame's JointSpec for a link,
/// the last joint's for the tip (the payload carried through tip_rotation and tip_origin), root_mass,
/// root_com and root_inertia for the root link. Throws like checkPayload, and std::invalid_argument for a
/// frame out of range or the root link of a fixed root (the world: a payload on it moves nothing).
ModelSpec specWithPayload(const ModelSpec& spec, const Payload& payload, int frame);

/// The model with the payload at the tip: attachPayload(model, payload, model.n). For a serial chain a copy
/// of `model` whose last link's constants are rebuilt by buildModel (on a one-joint chain in that link's
/// frame), equal to buildModel(specWithPayload(model.spec, payload)) to rounding; for a tree model that
/// buildModel. Throws like checkPayload.
Model attachPayload(const Model& model, const Payload& payload);

/// The model with the payload, given in frame `frame`'s coordinates, merged into the link that carries the
/// frame (specWithPayload): for a serial chain's tip or last link the copy of the two-argument form, for any
/// other frame and every tree model buildModel(specWithPayload(model.spec, payload, frame)). Throws like
/// specWithPayload, and ModelError when buildModel refuses the result.
Model attachPayload(const Model& model, const Payload& payload, int frame);

}  // namespace denoc
