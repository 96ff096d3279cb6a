// Public types of the denoc client. Vectors and batches are Float64Array (any ArrayLike<number> is accepted
// as input); a batch of `count` states of a model with `dof` joints is one flat row-major array of
// count * dof values (state k's joint j at index k * dof + j), matrices per state (dof x dof, row-major)
// concatenated state after state. Units are SI (m, kg, s, rad, N, N m).
import type { ChannelCredentials, ChannelOptions } from '@grpc/grpc-js';

/** Numbers in: a Float64Array, a plain array or any other array-like. */
export type Numbers = ArrayLike<number>;

export interface Vec3 {
  x: number;
  y: number;
  z: number;
}

export type JointType = 'revolute' | 'prismatic';
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
  /** Extra grpc-js channel options. */
  channelOptions?: ChannelOptions;
}

/** Per-call options. */
export interface CallOptions {
  /** Deadline of this call, ms from now (overrides ClientOptions.timeoutMs). */
  timeoutMs?: number;
  /** Cancels the call (it then rejects with a DenocError CANCELLED). */
  signal?: AbortSignal;
}

export interface ModelInfo {
  modelId: string;
  name: string;
  dof: number;
  jointNames: string[];
  linkNames: string[];
  jointTypes: JointType[];
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
  /** Base link of the chain (default: the root link). */
  baseLink?: string;
  /** Tip link of the chain (default: the single leaf). */
  tipLink?: string;
  /** Armature per moving joint, base to tip (dof values). */
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

/** How a batch is shaped: count defaults to q.length / dof, dof to the model's. */
export interface BatchShape {
  count?: number;
  dof?: number;
}

export interface InverseDynamicsInput extends BatchShape {
  /** A body held by the tip for this call (every dynamics call takes one). */
  payload?: Payload;
  q: Numbers;
  qd: Numbers;
  qdd: Numbers;
  /** [mx, my, mz, fx, fy, fz] per state on the last link, tip frame (count * 6 values). */
  tipWrench?: Numbers;
}

export interface InverseDynamicsResult extends Answer {
  tau: Float64Array;
}

export interface ForwardDynamicsInput extends BatchShape {
  payload?: Payload;
  q: Numbers;
  qd: Numbers;
  tau: Numbers;
  route?: ForwardRoute;
}

export interface ForwardDynamicsResult extends Answer {
  qdd: Float64Array;
  route: ForwardRoute;
}

export interface FullFactorInput extends BatchShape {
  payload?: Payload;
  q: Numbers;
  /** Required with convective or bias. */
  qd?: Numbers;
  /** Also C(q, qd). */
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
  q0: Numbers;
  qd0: Numbers;
  /** End time, s. */
  tEnd: number;
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
  /** dof values (constant torque) or k * dof values at the knots (row-major). */
  torqueValues?: Numbers;
  /** dof viscous damping coefficients. */
  damping?: Numbers;
  /** Samples per streamed batch (default 64). */
  batchSize?: number;
}

/** One streamed batch of simulation samples, in time order. */
export interface SimulationBatch extends Answer {
  t: Float64Array;
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
}

/** A rigid body held by the tip for one call (a tool, a grasped part), merged into the last link. */
export interface Payload {
  /** kg, > 0. */
  mass: number;
  /** Mass centre in the tip frame, m (default the tip frame's origin). */
  com?: Vec3 | Numbers;
  /** About the mass centre, tip-frame axes, kg m^2 (default: a point mass). */
  inertia?: { ixx: number; iyy: number; izz: number; ixy?: number; ixz?: number; iyz?: number };
}

export interface KinematicsInput extends BatchShape {
  q: Numbers;
  /** Needed for jdotQd. */
  qd?: Numbers;
  /** A link name of ModelInfo.linkNames; '' or absent: the tip frame. */
  link?: string;
  /** A point on that link, in the frame's coordinates (default its origin). */
  point?: Vec3 | Numbers;
  /** Axes of jacobian, jdotQd and lambda: 'base' (default) or 'local'. */
  reference?: 'base' | 'local';
  jacobian?: boolean;
  jdotQd?: boolean;
  lambda?: boolean;
  /** The task of lambda: 'full' 6 x 6 (default), 'linear' or 'angular' 3 x 3. */
  lambdaRows?: 'full' | 'linear' | 'angular';
  allFrames?: boolean;
  payload?: Payload;
}

export interface KinematicsResult extends Answer {
  /** count * 9: the frame's rotation (base <- frame), row-major. */
  rotation: Float64Array;
  /** count * 3: its origin in the base frame. */
  origin: Float64Array;
  /** count * 6 * dof, rows [angular; linear]. */
  jacobian?: Float64Array;
  /** count * 6. */
  jdotQd?: Float64Array;
  /** count * r * r. */
  lambda?: Float64Array;
  /** count * (dof + 1) * 9 and count * (dof + 1) * 3: every frame, the tip last. */
  frameRotations?: Float64Array;
  frameOrigins?: Float64Array;
}

export interface DerivativesInput extends BatchShape {
  q: Numbers;
  qd: Numbers;
  /** [mx, my, mz, fx, fy, fz] per state on the last link (count * 6), or none. */
  tipWrench?: Numbers;
  payload?: Payload;
}

/** count * dof * dof matrices (row-major, entry (i, j) = d out_i / d in_j) and count * dof vectors. */
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

export interface RolloutInput {
  /** K * 2 dof initial states [q, qd]. */
  x0: Numbers;
  /** K * T * dof torques, or T * dof shared by every rollout (sharedControls). */
  u: Numbers;
  count: number;
  steps: number;
  dt: number;
  sharedControls?: boolean;
  /** 'rk4' (default) or 'semiImplicitEuler'. */
  scheme?: 'rk4' | 'semiImplicitEuler';
  linearize?: boolean;
  payload?: Payload;
}

export interface RolloutResult extends Answer {
  steps: number;
  /** K * (T + 1) * 2 dof. */
  states: Float64Array;
  /** linearize: K * T * (2 dof)^2 and K * T * 2 dof * dof, row-major. */
  a?: Float64Array;
  b?: Float64Array;
}
