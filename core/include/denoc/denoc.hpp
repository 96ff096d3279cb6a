// The denoc core library: include this for everything.
#pragma once

#include "denoc/algorithm/convective.hpp"
#include "denoc/algorithm/energy.hpp"
#include "denoc/algorithm/fixman.hpp"
#include "denoc/algorithm/forward_dynamics.hpp"
#include "denoc/algorithm/inertia_matrix.hpp"
#include "denoc/algorithm/inverse_dynamics.hpp"
#include "denoc/algorithm/kinematics.hpp"
#include "denoc/algorithm/udu.hpp"
#include "denoc/batch.hpp"
#include "denoc/data.hpp"
#include "denoc/dh.hpp"
#include "denoc/model.hpp"
#include "denoc/model_io.hpp"
#include "denoc/simulate.hpp"
#include "denoc/trajectory.hpp"
#include "denoc/urdf.hpp"
