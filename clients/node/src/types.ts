// Public types of the denoc client. Vectors and batches are Float64Array (any ArrayLike<number> is accepted
// as input); a batch of `count` states of a model with `dof` joints is one flat row-major array of
// count * dof values (state k's joint j at index k * dof + j), matrices per state (dof x dof, row-major)
// concatenated state after state. Units are SI (m, kg, s, rad, N, N m).
//
// Trees and moving roots (docs/trees.md): a model has nq configuration coordinates, nv = dof velocity
// coordinates and nu actuated joints. For a fixed root nq = nv = nu = dof. A floating root puts
// [x y z | qx qy qz qw] (the root link's origin in the world, its orientation world <- root as a unit
// quaternion, scalar last) first in q and [wx wy wz | vx vy vz] (angular then linear velocity, both in the
// root link's axes) first in qd, qdd and tau: nq = nu + 7, nv = nu + 6. A planar root puts [x y yaw] first
// in both: nq = nv = nu + 3. So q batches hold count * nq values, qd, qdd and tau batches count * nv.
import type { ChannelCredentials, ChannelOptions } from '@grpc/grpc-js';

/** Numbers in: a Float64Array, a plain array or any other array-like. */
export type Numbers = ArrayLike<number>;
/**
 * A batch in: one flat row-major array (count * width values, state k at k * width), or one array per state
 * (number[][] or Float64Array[], each of width values; the client joins them into the flat form).
 */
export type Batch = Numbers | readonly Numbers[];

export interface Vec3 {
  x: number;
  y: number;
  z: number;
}

export type JointType = 'revolute' | 'prismatic';
/** The type of a ModelInfo.joints entry: a moving root joint is 'floating' or 'planar'. */
export type TreeJointType = JointType | 'floating' | 'planar';
/**
 * How a model's root link moves relative to the world: 'fixed' (welded; q holds the joints only),
 * 'floating' (6 DOF: q starts with [x y z qx qy qz qw], qd with [wx wy wz vx vy vz] in the root's axes) or
 * 'planar' (x, y and yaw in the world's x-y plane: q and qd start with [x y yaw]).
 */
export type RootJoint = 'fixed' | 'floating' | 'planar';
/** The axes a vector is given in: 'world' (= 'base', the frame gravity is given in) or 'local' (the frame's own). */
export type Reference = 'world' | 'base' | 'local';
/** Forward-dynamics route: 'saha' O(n) (default), 'fixman' O(n), 'cholesky' O(n^3) reference. */
export type ForwardRoute = 'saha' | 'fixman' | 'cholesky';
/** Simulation integrator: 'dopri5' adaptive Dormand-Prince 5(4) (default) or 'rk4' fixed step. */
export type Integrator = 'dopri5' | 'rk4';

/** PEM material: a Buffer, PEM text ('-----BEGIN ...'), or the path of a PEM file. */
export type Pem = string | Buffer;

/** TLS to the server. */
export interface TlsOptions {
  /** CA certificates that sign the server's certificate (default: the system's roots). */
  rootCerts?: Pem;
  /** Client certificate chain for mutual TLS (with privateKey). */
  certChain?: Pem;
  /** Client private key for mutual TLS (with certChain). */
  privateKey?: Pem;
  /**
   * Name the server's certificate must carry when it differs from the target's host, e.g. 'localhost' for
   * a certificate issued to localhost reached at 127.0.0.1 (the channel option grpc.ssl_target_name_override).
   */
  serverName?: string;
}

export interface ClientOptions {
  /** TLS: true for the system's roots, or the CA, client certificate and server name to use. */
  tls?: boolean | TlsOptions;
  /** Channel credentials, for anything `tls` does not cover; default: insecure (plain TCP). Not with `tls`. */
  credentials?: ChannelCredentials;
  /** Bearer token sent as `authorization: Bearer <token>` on every call (visible ASCII only). */
  token?: string;
  /** Deadline of unary calls, ms (default 30000, as in every denoc client). Simulate and stream sessions have none unless given. */
  timeoutMs?: number;
  /** Re-register a model this client registered when a server answers NOT_FOUND for it (default true). */
  reRegister?: boolean;
  /** Retries of idempotent calls on UNAVAILABLE; each field defaults to DEFAULT_RETRY's (the C++ client's). */
  retry?: RetryPolicy;
  /** Called before each retry's wait (for logs and tests). */
  onRetry?: (event: RetryEvent) => void;
  /** Extra grpc-js channel options. */
  channelOptions?: ChannelOptions;
}

/**
 * Retries of idempotent calls (all but deleteModel and a stream session; simulate before its first batch) on
 * UNAVAILABLE: at most maxAttempts attempts in all, waiting initialBackoffMs * multiplier^k (capped at
 * maxBackoffMs, scaled by a random factor 1 +- jitter) between them.
 */
export interface RetryPolicy {
  /** Attempts in all, >= 1 (1: no retry); default 5. */
  maxAttempts?: number;
  /** Wait before the second attempt, ms; default 50. */
  initialBackoffMs?: number;
  /** Growth of the wait per attempt; default 2. */
  multiplier?: number;
  /** Cap of the wait, ms; default 2000. */
  maxBackoffMs?: number;
  /** Each wait is scaled by a random factor 1 +- jitter; default 0.2. */
  jitter?: number;
}

/** What the client reports before each retry. */
export interface RetryEvent {
  /** The RPC, e.g. 'InverseDynamics'. */
  call: string;
  /** The attempt that failed, 1-based. */
  attempt: number;
  /** Its status code: UNAVAILABLE. */
  code: number;
  /** The status message. */
  message: string;
  /** The wait before the next attempt, ms. */
  backoffMs: number;
}

/** Per-call options. */
export interface CallOptions {
  /** Deadline of this call, ms from now (overrides ClientOptions.timeoutMs). */
  timeoutMs?: number;
  /** Cancels the call (it then rejects with a DenocError CANCELLED). */
  signal?: AbortSignal;
}

/** One joint of a model's tree (ModelInfo.joints). */
export interface Joint {
  /** The joint's name; a moving root joint is 'root_joint'. */
  name: string;
  type: TreeJointType;
  /** Index in ModelInfo.joints of the joint that moves this one's parent link; -1: none (the root link or the world). */
  parent: number;
  /** Its first coordinate in q. */
  qIndex: number;
  /** Its first coordinate in qd, qdd and tau. */
  vIndex: number;
  /** Its coordinates in q: 1, 7 (floating) or 3 (planar). */
  nq: number;
  /** Its coordinates in qd: 1, 6 (floating) or 3 (planar). */
  nv: number;
  /** The link it moves. */
  link: string;
  /** Joints on its path from the world, itself included. */
  depth: number;
}

/**
 * A frame a request may name (kinematics links, wrenches, payloads): a link, 'tip', the root link, or a
 * fixed frame (a URDF link merged into another by fixed joints: a foot, a flange, a sensor mount).
 */
export interface Frame {
  name: string;
  /** Index in ModelInfo.joints of the joint that moves it; -1: fixed to the world. */
  joint: number;
  /** A fixed frame: the frame (a name of ModelInfo.frames) it is fixed to; '' for the others. */
  fixedTo: string;
}

export interface ModelInfo {
  modelId: string;
  name: string;
  /** Velocity coordinates nv (the number of joints of a fixed-root model); qd, qdd, tau have dof values per state. */
  dof: number;
  /** The moving non-root joints (nu of them), in their order in q (base to tip). */
  jointNames: string[];
  linkNames: string[];
  jointTypes: JointType[];
  /** Configuration coordinates: q has nq values per state (dof for a fixed root, dof + 1 floating). */
  nq: number;
  /** Velocity coordinates (= dof). */
  nv: number;
  /** Actuated coordinates: nv less the root's 6 (floating) or 3 (planar). Rollout controls and simulation torques have nu. */
  nu: number;
  /** How the root link moves. */
  root: RootJoint;
  /** The root joint when it moves, then the joints of jointNames, every parent before its children. */
  joints: Joint[];
  /**
   * Every frame a request may name: the links of jointNames (0 .. nu-1), 'tip' (nu), the root link (nu + 1),
   * then the fixed frames (URDF links merged by fixed joints) in the order of the file.
   */
  frames: Frame[];
  /** Most joints on a path from the root link to a leaf. */
  depth: number;
  gravity: Vec3;
  /** Position limits per joint (-Infinity / Infinity when unlimited). */
  lower: Float64Array;
  upper: Float64Array;
  velocityLimit: Float64Array;
  effortLimit: Float64Array;
  armature: Float64Array;
  pinned: boolean;
  /** 'urdf', 'dh' or 'builtin'. */
  source: string;
}

export interface RegisteredModel extends ModelInfo {
  /** False when the server already had this model (same content, same id). */
  created: boolean;
  computeTimeNs: number;
}

export interface RegisterOptions {
  /** Display name (not part of the id). */
  name?: string;
  /** Gravity in the base frame, m/s^2 (default (0, 0, -9.81)); part of the id. */
  gravity?: Vec3 | Numbers;
}

export interface UrdfOptions extends RegisterOptions {
  /** Base link of the chain or tree (default: the root link). */
  baseLink?: string;
  /** Tip link of a chain (default: the whole tree below baseLink; its tip frame is on the last joint's link). */
  tipLink?: string;
  /** How baseLink moves: 'fixed' (default), 'floating' or 'planar'; part of the id. */
  root?: RootJoint;
  /** Armature per moving joint, base to tip (nu values). */
  armature?: Numbers;
}

/** Joint limits; absent fields are unlimited. */
export interface Limits {
  lower?: number;
  upper?: number;
  velocity?: number;
  effort?: number;
}

/** One row of a DH table in Saha's convention (see dynamics.proto, DHLink). Angles in rad. */
export interface DHLink {
  joint?: string;
  link?: string;
  type: JointType;
  a?: number;
  b?: number;
  alpha?: number;
  theta?: number;
  mass: number;
  /** Mass center from frame i+1's origin, in frame i+1. */
  com?: Vec3 | Numbers;
  /** About the mass center, frame i+1's axes. */
  inertia: { ixx: number; iyy: number; izz: number; ixy?: number; ixz?: number; iyz?: number };
  limits?: Limits;
  armature?: number;
}

/** Fields common to every dynamics answer. */
export interface Answer {
  modelId: string;
  gravity: Vec3;
  /** Time spent in the server's dynamics core for the whole call, ns. */
  computeTimeNs: number;
  count: number;
  dof: number;
}

/**
 * How a batch is shaped: count defaults to q.length / nq; dof (nv) and nq to the model's (nq follows a given
 * dof: dof + 1 for a floating root, dof otherwise).
 */
export interface BatchShape {
  count?: number;
  dof?: number;
  nq?: number;
}

/**
 * A wrench the environment applies on a frame of the model (a foot's contact force, a tool's load):
 * [mx, my, mz, fx, fy, fz], the moment about the frame's origin.
 */
export interface LinkWrench {
  /** A name of ModelInfo.frames (a link, 'tip', the root link); '' or absent: the tip frame. */
  link?: string;
  /** count * 6 values (one wrench per state) or 6 (the same for every state; a stream message: 6). */
  wrench: Batch;
  /** Axes of the wrench: 'world' (default; 'base' is the same) or 'local' (the frame's own). */
  reference?: Reference;
}

export interface InverseDynamicsInput extends BatchShape {
  /** A body held by the tip (or payload.link) for this call (every dynamics call takes one). */
  payload?: Payload;
  /** count * nq positions. */
  q: Batch;
  /** count * dof velocities. */
  qd: Batch;
  /** count * dof accelerations. */
  qdd: Batch;
  /** [mx, my, mz, fx, fy, fz] per state on the last link, tip frame (count * 6 values). */
  tipWrench?: Batch;
  /** External wrenches on named frames (at most the server's maxWrenches). */
  wrenches?: readonly LinkWrench[];
}

export interface InverseDynamicsResult extends Answer {
  tau: Float64Array;
}

export interface ForwardDynamicsInput extends BatchShape {
  payload?: Payload;
  /** count * nq positions. */
  q: Batch;
  /** count * dof velocities. */
  qd: Batch;
  /** count * dof generalized forces (a moving root's entries: the wrench the world applies on the root link). */
  tau: Batch;
  /** 'fixman' is refused for a tree model. */
  route?: ForwardRoute;
  /** External wrenches on named frames (at most the server's maxWrenches). */
  wrenches?: readonly LinkWrench[];
}

export interface ForwardDynamicsResult extends Answer {
  qdd: Float64Array;
  route: ForwardRoute;
}

export interface FullFactorInput extends BatchShape {
  payload?: Payload;
  /** count * nq positions. */
  q: Batch;
  /** Required with convective or bias. */
  qd?: Batch;
  /** Also C(q, qd) (nv x nv per state, trees too). */
  convective?: boolean;
  /** Also C(q, qd) qd + g(q). */
  bias?: boolean;
  /** Also g(q). */
  gravityTorque?: boolean;
  /** Also I(q)^-1. */
  inverse?: boolean;
}

export interface FullFactorResult extends Answer {
  /** count * dof * dof: I(q) per state. */
  inertia: Float64Array;
  /** count * dof * dof: unit upper triangular U, I = U D U^T. */
  u: Float64Array;
  /** count * dof: diagonal of D. */
  d: Float64Array;
  /** count: log det I(q). */
  logDet: Float64Array;
  convective?: Float64Array;
  bias?: Float64Array;
  gravityTorque?: Float64Array;
  inverse?: Float64Array;
}

export interface SimulateInput {
  /** nq initial positions. */
  q0: Numbers;
  /** dof initial velocities. */
  qd0: Numbers;
  /** End time, s. */
  tEnd: number;
  /** 'dopri5' (default) or 'rk4'; a tree model takes both on its configuration manifold. */
  integrator?: Integrator;
  /** 'saha' (default) or 'cholesky'. */
  route?: ForwardRoute;
  /** Time between samples, s (default 0.01); ignored with sampleTimes. */
  dtOut?: number;
  sampleTimes?: Numbers;
  /** RK4 step, s. */
  step?: number;
  rtol?: number;
  atol?: number;
  initialStep?: number;
  maxStep?: number;
  maxSteps?: number;
  /** Knot times of a piecewise-linear torque (k values, strictly increasing). */
  torqueTimes?: Numbers;
  /** nu values (constant torque) or k * nu values at the knots (row-major); a moving root is unactuated. */
  torqueValues?: Batch;
  /** nu viscous damping coefficients. */
  damping?: Numbers;
  /** Samples per streamed batch (default 64). */
  batchSize?: number;
}

/** One streamed batch of simulation samples, in time order. */
export interface SimulationBatch extends Answer {
  t: Float64Array;
  /** count * nq. */
  q: Float64Array;
  qd: Float64Array;
  energy: Float64Array;
  kinetic: Float64Array;
  potential: Float64Array;
  /** True on the final batch, which also carries the run's statistics below. */
  last: boolean;
  steps: number;
  rejectedSteps: number;
  evaluations: number;
}

/** One answer of a stream session. */
export interface StreamAnswer {
  modelId: string;
  gravity: Vec3;
  computeTimeNs: number;
  computation: 'inverse' | 'forward';
  sequence: number;
  /** tau (inverse dynamics) or qdd (forward dynamics), dof values. */
  result: Float64Array;
}

/** The server's version and the limits it enforces (GetServerInfo). */
export interface ServerInfo {
  /** denocd's version, e.g. '0.2.0'. */
  version: string;
  /** The wire contract's package: 'denoc.v1'. */
  protoPackage: string;
  maxDof: number;
  /** Most states per batch call; larger batches are split by the client. */
  maxStates: number;
  maxReceiveMessageBytes: number;
  maxSendMessageBytes: number;
  maxStreams: number;
  tokensRequired: boolean;
  /** Most joints on a path from a model's root (0 from a server without trees). */
  maxDepth: number;
  /** Most external wrenches (LinkWrench) in one request. */
  maxWrenches: number;
  /** Most frames named in one kinematics request (links). */
  maxFrames: number;
}

/**
 * A rigid body held by a link for one call (a tool, a grasped part, a backpack), merged into that link: the
 * tip's last link by default, or the link of the frame `link` names.
 */
export interface Payload {
  /** kg, > 0. */
  mass: number;
  /** Mass centre in the holding frame, m (default the frame's origin). */
  com?: Vec3 | Numbers;
  /** About the mass centre, the holding frame's axes, kg m^2 (default: a point mass). */
  inertia?: { ixx: number; iyy: number; izz: number; ixy?: number; ixz?: number; iyz?: number };
  /** The holding frame: a name of ModelInfo.frames (a link, 'tip', the root link); '' or absent: the tip frame. */
  link?: string;
}

export interface KinematicsInput extends BatchShape {
  /** count * nq positions. */
  q: Batch;
  /** count * dof velocities: needed for jdotQd and centroidalMomentum. */
  qd?: Batch;
  /** A name of ModelInfo.frames (a link, 'tip', the root link); '' or absent: the tip frame. Not with `links`. */
  link?: string;
  /**
   * Several frames at once (four feet, two hands): L names of ModelInfo.frames (at most the server's
   * maxFrames). rotation, origin, jacobian, jdotQd and lambda then hold L blocks per state, in this order.
   */
  links?: readonly string[];
  /** A point on that link (on each of `links`), in the frame's coordinates (default its origin). */
  point?: Vec3 | Numbers;
  /** Axes of jacobian, jdotQd and lambda: 'base' (= 'world', default) or 'local'. */
  reference?: Reference;
  jacobian?: boolean;
  jdotQd?: boolean;
  lambda?: boolean;
  /** The task of lambda: 'full' 6 x 6 (default), 'linear' or 'angular' 3 x 3. */
  lambdaRows?: 'full' | 'linear' | 'angular';
  allFrames?: boolean;
  /** Also the centre of mass (world) and the total mass. */
  centerOfMass?: boolean;
  /** Also the 3 x dof Jacobian of the centre of mass (world axes). */
  comJacobian?: boolean;
  /** Also the centroidal momentum matrix A_G (6 x dof, rows [angular; linear] about the centre of mass, world axes). */
  centroidal?: boolean;
  /** Also the centroidal momentum h_G = A_G qd (6 values, [angular; linear]; needs qd). */
  centroidalMomentum?: boolean;
  payload?: Payload;
}

/** Per state, L blocks (L = links.length, or 1 for `link`) of each frame output, in the order of `links`. */
export interface KinematicsResult extends Answer {
  /** count * L * 9: the frame's rotation (world <- frame), row-major. */
  rotation: Float64Array;
  /** count * L * 3: its origin in the world (base) frame. */
  origin: Float64Array;
  /** count * L * 6 * dof, rows [angular; linear]. */
  jacobian?: Float64Array;
  /** count * L * 6. */
  jdotQd?: Float64Array;
  /** count * L * r * r (serial chains only). */
  lambda?: Float64Array;
  /**
   * count * F * 9 and count * F * 3: every frame of ModelInfo.frames in its order (F = nu + 1, the tip last,
   * for a fixed root; F = nu + 2, the root link last, for a floating or planar one).
   */
  frameRotations?: Float64Array;
  frameOrigins?: Float64Array;
  /** centerOfMass: count * 3, world. */
  com?: Float64Array;
  /** centerOfMass: count total masses (payload included), kg. */
  mass?: Float64Array;
  /** comJacobian: count * 3 * dof. */
  comJacobian?: Float64Array;
  /** centroidal: count * 6 * dof, rows [angular; linear] about the centre of mass. */
  centroidal?: Float64Array;
  /** centroidalMomentum: count * 6, [angular; linear]. */
  centroidalMomentum?: Float64Array;
}

export interface DerivativesInput extends BatchShape {
  /** count * nq positions. */
  q: Batch;
  /** count * dof velocities. */
  qd: Batch;
  /** [mx, my, mz, fx, fy, fz] per state on the last link (count * 6), or none. */
  tipWrench?: Batch;
  payload?: Payload;
  /**
   * External wrenches on named frames (at most the server's maxWrenches), as in InverseDynamicsInput; the
   * derivatives include their own dependence on q (a 'world' wrench keeps its axes while its point moves).
   */
  wrenches?: readonly LinkWrench[];
}

/**
 * count * dof * dof matrices (row-major, entry (i, j) = d out_i / d in_j) and count * dof vectors. For a
 * floating or planar root the q columns are tangent directions: d out / d dq with q moved by
 * integrateConfiguration(q, dq) (the root's rotation about its own axes), so every matrix is dof x dof.
 */
export interface InverseDynamicsDerivatives extends Answer {
  dtauDq: Float64Array;
  dtauDqd: Float64Array;
  tau: Float64Array;
}

export interface ForwardDynamicsDerivatives extends Answer {
  dqddDq: Float64Array;
  dqddDqd: Float64Array;
  /** I(q)^-1. */
  dqddDtau: Float64Array;
  qdd: Float64Array;
}

/**
 * K rollouts of T steps. A state is x = [q; qd] (nq + dof values; 2 dof for a fixed root); the controls are
 * the nu actuated joints' torques (a moving root is unactuated). A floating root's q is integrated on the
 * manifold (its quaternion stays unit).
 */
export interface RolloutInput {
  /** K * (nq + dof) initial states [q, qd]. */
  x0: Batch;
  /** K * T * nu torques, or T * nu shared by every rollout (sharedControls). */
  u: Batch;
  count: number;
  steps: number;
  dt: number;
  sharedControls?: boolean;
  /** 'rk4' (default) or 'semiImplicitEuler'. */
  scheme?: 'rk4' | 'semiImplicitEuler';
  linearize?: boolean;
  payload?: Payload;
  /**
   * External wrenches on named frames, each held constant over the whole rollout: 6 values shared by every
   * rollout, or K * 6 (one wrench per rollout).
   */
  wrenches?: readonly LinkWrench[];
}

export interface RolloutResult extends Answer {
  steps: number;
  /** K * (T + 1) * (nq + dof): x_0 .. x_T per rollout. */
  states: Float64Array;
  /**
   * linearize: K * T * (2 dof)^2 and K * T * 2 dof * nu, row-major, in the tangent space (the q part as in
   * the derivatives: along integrateConfiguration).
   */
  a?: Float64Array;
  b?: Float64Array;
}

/**
 * What the client-side configuration functions (integrateConfiguration, differenceConfiguration, ...) need
 * of a model: its root and its sizes. A ModelInfo is one.
 */
export interface ConfigurationSpace {
  root: RootJoint;
  nq: number;
  nv: number;
  /** The joints' position limits (nu values; neutralConfiguration clamps 0 into them). */
  lower?: ArrayLike<number>;
  upper?: ArrayLike<number>;
}
