// DenocClient: promise-based, typed wrappers over the denoc.v1.Dynamics stub.
import * as grpc from '@grpc/grpc-js';
import { status as Status } from '@grpc/grpc-js';

import * as fs from 'node:fs';

import {
  dhLinkToProto,
  flatBatch,
  flatten,
  fromVec3,
  integratorToProto,
  invalid,
  payloadToProto,
  modelInfoFromProto,
  referenceToProto,
  rootToProto,
  routeFromProto,
  routeToProto,
  toArray,
  toF64,
  toVec3,
  wrenchesToProto,
} from './convert';
import type { Flat, FlatWrench } from './convert';
import { DenocError, errorFor, namesCachedLimit, toDenocError, wasDeleted } from './errors';
import { dynamicsClientConstructor } from './proto';
import { StreamSession, type StreamCall } from './stream';
import type {
  Answer,
  Batch,
  BatchShape,
  CallOptions,
  ClientOptions,
  DHLink,
  DerivativesInput,
  ForwardDynamicsDerivatives,
  ForwardDynamicsInput,
  ForwardDynamicsResult,
  InverseDynamicsDerivatives,
  KinematicsInput,
  KinematicsResult,
  RolloutInput,
  RolloutResult,
  FullFactorInput,
  FullFactorResult,
  InverseDynamicsInput,
  InverseDynamicsResult,
  ModelInfo,
  RegisterOptions,
  RegisteredModel,
  RetryPolicy,
  SimulateInput,
  SimulationBatch,
  Numbers,
  Pem,
  ServerInfo,
  TlsOptions,
  UrdfOptions,
} from './types';
import type { DynamicsClient } from '../generated/denoc/v1/Dynamics';
import type { RegisterModelRequest } from '../generated/denoc/v1/RegisterModelRequest';
import type { RegisterModelResponse__Output } from '../generated/denoc/v1/RegisterModelResponse';
import type { SimulateRequest } from '../generated/denoc/v1/SimulateRequest';
import type { SimulateResponse__Output } from '../generated/denoc/v1/SimulateResponse';
import type { Vec3__Output } from '../generated/denoc/v1/Vec3';

/** The default deadline of a unary call, ms: the same in every denoc client. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** The default retry policy of idempotent calls on UNAVAILABLE: the C++ client's (RetryPolicy). */
export const DEFAULT_RETRY: Readonly<Required<RetryPolicy>> = {
  maxAttempts: 5,
  initialBackoffMs: 50,
  multiplier: 2,
  maxBackoffMs: 2000,
  jitter: 0.2,
};

/** values[from, to) as a plain array (undefined stays undefined). */
function slice(values: Numbers | undefined, from: number, to: number): number[] | undefined {
  if (values === undefined) return undefined;
  return Array.prototype.slice.call(values, from, to) as number[];
}

/**
 * The wrench arrays a split must cut state by state: those with other than 6 values (6: one wrench for every
 * state, sent whole to each part; any other length than count * 6 keeps the batch whole, for the server to
 * refuse with its message).
 */
function wrenchArrays(ws: readonly FlatWrench[] | undefined): [Numbers, number][] {
  return (ws ?? []).filter((w) => w.wrench.length !== 6).map((w) => [w.wrench, 6]);
}

/** The wrenches of states [a, b) (a wrench of 6 values whole). */
function sliceWrenches(ws: readonly FlatWrench[] | undefined, a: number, b: number): FlatWrench[] | undefined {
  if (ws === undefined) return undefined;
  return ws.map((w) => ({ ...w, wrench: w.wrench.length === 6 ? w.wrench : (slice(w.wrench, 6 * a, 6 * b) ?? []) }));
}

/** A model's sizes: nq configuration, nv (= dof) velocity and nu actuated coordinates. */
interface Sizes {
  nq: number;
  nv: number;
  nu: number;
}

/** The arrays one after the other. */
function concat(parts: readonly Float64Array[]): Float64Array {
  const out = new Float64Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Every part's optional output joined, or undefined when the parts do not carry it. */
function concatAll<R>(results: readonly R[], pick: (r: R) => Float64Array | undefined): Float64Array | undefined {
  const arrays = results.map(pick);
  return arrays.length > 0 && arrays.every((x): x is Float64Array => x !== undefined) ? concat(arrays) : undefined;
}

/** The answer of a split batch: the first part's model and gravity, compute times and counts summed. */
function joined(parts: readonly Answer[]): Answer {
  const first = parts[0];
  if (first === undefined) throw errorFor(Status.INTERNAL, 'a split batch without parts');
  return {
    modelId: first.modelId,
    gravity: first.gravity,
    computeTimeNs: parts.reduce((s, p) => s + p.computeTimeNs, 0),
    count: parts.reduce((s, p) => s + p.count, 0),
    dof: first.dof,
  };
}

/** PEM bytes from a Buffer, PEM text or a file path; null when not given. */
function pem(value: Pem | undefined): Buffer | null {
  if (value === undefined) return null;
  if (Buffer.isBuffer(value)) return value;
  if (value.trimStart().startsWith('-----BEGIN')) return Buffer.from(value);
  return fs.readFileSync(value);
}

type UnaryStart<Res> = (
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: grpc.requestCallback<Res>,
) => grpc.ClientUnaryCall;

interface AnswerMsg {
  model_id: string;
  gravity: Vec3__Output | null;
  compute_time_ns: number;
  count: number;
  dof: number;
}

function answer(m: AnswerMsg): Answer {
  return {
    modelId: m.model_id,
    gravity: fromVec3(m.gravity),
    computeTimeNs: Number(m.compute_time_ns),
    count: m.count,
    dof: m.dof,
  };
}

/** The requested optional output of FullFactor, or undefined when it was not requested. */
function optional(x: number[], requested: boolean | undefined): Float64Array | undefined {
  return requested === true ? toF64(x) : undefined;
}

/**
 * A client of one denocd server (or a load-balanced address). Every method returns a promise (simulate: an
 * async iterator) and rejects with a DenocError carrying the gRPC status code and the server's message.
 *
 * The client remembers the source of every model it registers. When a server answers NOT_FOUND for such a
 * model (another replica, a server with an empty store, a deleted store file), the client registers the
 * model again on that server and retries the call once; model ids are content addresses, so the id stays
 * the same. `reRegistrations` counts how often that happened. A model the server says "was deleted"
 * (DeleteModel, by any client on any replica sharing the store) is not registered again: the client forgets
 * its source and rejects with the NotFoundError (`wasDeleted(err.details)` is true).
 */
export class DenocClient {
  /** The generated grpc-js stub (for calls the wrappers do not cover); replaced by reconnect(). */
  stub: DynamicsClient;
  /** How many transparent re-registrations this client has made. */
  reRegistrations = 0;
  /** How many times this client has sent a call again after UNAVAILABLE (the retry policy). */
  retries = 0;

  private readonly options: ClientOptions;
  private readonly retry: Required<RetryPolicy>;
  private readonly credentials: grpc.ChannelCredentials;
  private readonly channelOptions: grpc.ChannelOptions;
  private readonly sources = new Map<string, RegisterModelRequest>();
  private readonly sizes = new Map<string, Sizes>();
  private readonly inFlightRegistrations = new Map<string, Promise<void>>();
  private maxStatesKnown: Promise<number> | undefined;

  /** `address`: host:port, e.g. '127.0.0.1:50051' (any grpc-js target, such as 'dns:///denoc:50051'). */
  /**
   * `address`: host:port, e.g. '127.0.0.1:50051' (any grpc-js target, such as 'dns:///denoc:50051'). Throws
   * an InvalidArgumentError for a token that is not visible ASCII, a client certificate without its key (or
   * the reverse), `tls` together with `credentials`; reading a PEM file that is not there throws Node's error.
   */
  constructor(address: string, options: ClientOptions = {}) {
    this.options = options;
    if (options.token !== undefined && options.token !== '' && !/^[\x21-\x7e]+$/.test(options.token)) {
      throw invalid('token: only visible ASCII characters are allowed (no spaces, newlines or control characters)');
    }
    this.channelOptions = { ...(options.channelOptions ?? {}) };
    const retry = { ...DEFAULT_RETRY, ...options.retry };
    this.retry = { ...retry, maxAttempts: Math.max(1, Math.floor(retry.maxAttempts)) };
    // reconnect as fast as the retry policy retries, so that a retry after a server's (re)start finds it (as
    // the C++ and Python clients do; not grpc.min_reconnect_backoff_ms, a bound of the connection's setup)
    const initial = Math.max(10, this.retry.initialBackoffMs);
    this.channelOptions['grpc.initial_reconnect_backoff_ms'] ??= initial;
    this.channelOptions['grpc.max_reconnect_backoff_ms'] ??= Math.max(initial, this.retry.maxBackoffMs);
    // calls spread over a fleet by default when the target names several servers (a headless service's
    // dns:///, an ipv4:/ipv6: list), unless the caller chose a policy (docs/clients.md)
    if (
      /^(dns|ipv4|ipv6):/.test(address) &&
      this.channelOptions['grpc.service_config'] === undefined &&
      this.channelOptions['grpc.lb_policy_name'] === undefined
    ) {
      this.channelOptions['grpc.service_config'] = JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] });
    }
    this.credentials = this.makeCredentials(options);
    this.stub = this.connect(address);
  }

  private makeCredentials(options: ClientOptions): grpc.ChannelCredentials {
    const tls = options.tls;
    if (tls === undefined || tls === false) return options.credentials ?? grpc.credentials.createInsecure();
    if (options.credentials !== undefined) throw invalid('give either tls or credentials, not both');
    const t: TlsOptions = tls === true ? {} : tls;
    if ((t.certChain === undefined) !== (t.privateKey === undefined)) {
      throw invalid('mutual TLS needs both tls.certChain and tls.privateKey');
    }
    if (t.serverName !== undefined && t.serverName !== '') {
      this.channelOptions['grpc.ssl_target_name_override'] = t.serverName;
    }
    return grpc.credentials.createSsl(pem(t.rootCerts), pem(t.privateKey), pem(t.certChain));
  }

  /** Closes the channel; calls in progress fail. */
  close(): void {
    this.stub.close();
  }

  /**
   * Points the client at another server: closes the current channel and opens one to `address`, keeping
   * the remembered model sources (so models registered before are registered again there on first use).
   */
  reconnect(address: string): void {
    const old = this.stub;
    this.stub = this.connect(address);
    this.maxStatesKnown = undefined; // another server, perhaps other limits
    old.close();
  }

  private connect(address: string): DynamicsClient {
    const Ctor = dynamicsClientConstructor();
    return new Ctor(address, this.credentials, this.channelOptions);
  }

  /** Resolves once the channel is connected (or rejects after timeoutMs, default 10 s). */
  waitForReady(timeoutMs = 10_000): Promise<void> {
    return new Promise((resolve, reject) => {
      this.stub.waitForReady(Date.now() + timeoutMs, (err) => {
        if (err) reject(errorFor(Status.UNAVAILABLE, `not connected within ${timeoutMs} ms: ${err.message}`));
        else resolve();
      });
    });
  }

  // ---- models -------------------------------------------------------------------------------------------

  /**
   * Registers a URDF model (the XML text): the chain from baseLink to tipLink, or without tipLink the whole
   * tree below baseLink, under a fixed (default), floating or planar root (options.root).
   */
  registerUrdf(text: string, options: UrdfOptions = {}, call?: CallOptions): Promise<RegisteredModel> {
    let req: RegisterModelRequest;
    try {
      req = {
        urdf: { text, base_link: options.baseLink ?? '', tip_link: options.tipLink ?? '', root: rootToProto(options.root) },
      };
      this.commonRegisterFields(req, options);
    } catch (e) {
      return Promise.reject(e);
    }
    if (options.armature !== undefined) req.armature = toArray(options.armature);
    return this.register(req, call);
  }

  /** Registers a DH model (Saha's convention, links from base to tip). */
  registerDH(links: readonly DHLink[], options: RegisterOptions = {}, call?: CallOptions): Promise<RegisteredModel> {
    let req: RegisterModelRequest;
    try {
      req = { dh: { links: links.map((l, i) => dhLinkToProto(l, i)) } };
      this.commonRegisterFields(req, options);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.register(req, call);
  }

  /** Describes a registered model. */
  getModel(modelId: string, call?: CallOptions): Promise<ModelInfo> {
    return this.withModel(modelId, () => this.describe(modelId, call));
  }

  /** Every model the server holds (in memory and in its store), sorted by id (every page of ListModels). */
  async listModels(call?: CallOptions): Promise<ModelInfo[]> {
    const models: ModelInfo[] = [];
    let token = '';
    for (;;) {
      const pageToken = token;
      const res = await this.unary<{ models: Parameters<typeof modelInfoFromProto>[0][]; next_page_token: string }>(
        (md, o, cb) => this.stub.ListModels({ page_token: pageToken }, md, o, cb),
        call,
        'ListModels',
      );
      models.push(...res.models.map((m) => modelInfoFromProto(m)));
      if (res.next_page_token === '') break;
      if (res.next_page_token <= token) throw errorFor(Status.INTERNAL, "the server's next_page_token does not advance");
      token = res.next_page_token;
    }
    for (const m of models) this.sizes.set(m.modelId, { nq: m.nq, nv: m.nv, nu: m.nu });
    return models;
  }

  /**
   * The one model with this display name. Rejects with a NotFoundError when there is none and a
   * FailedPreconditionError listing the ids when several models carry the name.
   */
  async findModel(name: string, call?: CallOptions): Promise<ModelInfo> {
    const hits = (await this.listModels(call)).filter((m) => m.name === name);
    const [first] = hits;
    if (first === undefined) throw errorFor(Status.NOT_FOUND, `no model named '${name}'`);
    if (hits.length > 1) {
      throw errorFor(
        Status.FAILED_PRECONDITION,
        `${hits.length} models are named '${name}'; give the id: ${hits.map((m) => m.modelId).join(', ')}`,
      );
    }
    return first;
  }

  // ---- the server ---------------------------------------------------------------------------------------

  /** The server's version and limits (GetServerInfo; needs a token when tokens are on). */
  async getServerInfo(call?: CallOptions): Promise<ServerInfo> {
    const r = await this.unary<{
      version: string;
      proto_package: string;
      max_dof: number;
      max_states: number;
      max_receive_message_bytes: number;
      max_send_message_bytes: number;
      max_streams: number;
      tokens_required: boolean;
      max_depth: number;
      max_wrenches: number;
      max_frames: number;
    }>((md, o, cb) => this.stub.GetServerInfo({}, md, o, cb), call, 'GetServerInfo');
    return {
      version: r.version,
      protoPackage: r.proto_package,
      maxDof: r.max_dof,
      maxStates: r.max_states,
      maxReceiveMessageBytes: Number(r.max_receive_message_bytes),
      maxSendMessageBytes: Number(r.max_send_message_bytes),
      maxStreams: r.max_streams,
      tokensRequired: r.tokens_required,
      maxDepth: r.max_depth,
      maxWrenches: r.max_wrenches,
      maxFrames: r.max_frames,
    };
  }

  /**
   * The server's maxStates, asked once and kept (0 for a server without GetServerInfo: no split). A batch
   * refused with RESOURCE_EXHAUSTED naming it (a replica with a smaller limit) makes the client ask again, once
   * per call, and send the batch again split by the new limit when it is smaller (namesCachedLimit).
   */
  maxStates(call?: CallOptions): Promise<number> {
    if (this.maxStatesKnown === undefined) {
      const asked = this.getServerInfo(call).then(
        (s) => s.maxStates,
        (e: unknown) => {
          if (e instanceof DenocError && e.code === Status.UNIMPLEMENTED) return 0;
          this.maxStatesKnown = undefined; // ask again next time
          throw e;
        },
      );
      this.maxStatesKnown = asked;
    }
    return this.maxStatesKnown;
  }

  /**
   * Deletes a model from the server (registry and store); the client forgets its source, unless the server
   * refused the deletion (e.g. a PermissionDeniedError for another token's model).
   */
  async deleteModel(modelId: string, call?: CallOptions): Promise<string> {
    const source = this.sources.get(modelId);
    const sizes = this.sizes.get(modelId);
    this.sources.delete(modelId);
    this.sizes.delete(modelId);
    try {
      const res = await this.unary<{ model_id: string }>(
        (md, o, cb) => this.stub.DeleteModel({ model_id: modelId }, md, o, cb),
        call,
        'DeleteModel',
        false,
      );
      return res.model_id;
    } catch (e) {
      // refused (another token's model, a pinned one, no token): the model is still there, keep what the
      // client knew; after UNAVAILABLE or a deadline the deletion may have happened, so it stays forgotten
      const refused = [Status.PERMISSION_DENIED, Status.FAILED_PRECONDITION, Status.UNAUTHENTICATED, Status.INVALID_ARGUMENT];
      if (e instanceof DenocError && refused.includes(e.code)) {
        if (source !== undefined && !this.sources.has(modelId)) this.sources.set(modelId, source);
        if (sizes !== undefined && !this.sizes.has(modelId)) this.sizes.set(modelId, sizes);
      }
      throw e;
    }
  }

  /** True when this client holds the source of `modelId` (it can re-register it). */
  knowsSource(modelId: string): boolean {
    return this.sources.has(modelId);
  }

  // ---- dynamics -----------------------------------------------------------------------------------------

  /**
   * tau = I(q) qdd + C(q, qd) qd + g(q) - J^T f_tip - sum J_k^T w_k for a batch (flat row-major arrays: q
   * count x nq, qd, qdd count x dof), with the external wrenches w_k of input.wrenches on named frames.
   */
  inverseDynamics(modelId: string, raw: InverseDynamicsInput, call?: CallOptions): Promise<InverseDynamicsResult> {
    return this.resplit(() => this.inverseDynamicsSplit(modelId, raw, call), call);
  }

  private inverseDynamicsSplit(modelId: string, raw: InverseDynamicsInput, call?: CallOptions): Promise<InverseDynamicsResult> {
    return this.withModel(modelId, async () => {
      const input = flatten(raw, ['q', 'qd', 'qdd', 'tipWrench']);
      const wrenches = wrenchesToProto(input.wrenches);
      const { count, dof, nq } = await this.shape(modelId, input.q, input, call);
      const parts = await this.parts(
        count,
        [[input.q, nq], [input.qd, dof], [input.qdd, dof], [input.tipWrench, 6], ...wrenchArrays(input.wrenches)],
        call,
      );
      if (parts.length > 1) {
        const results: InverseDynamicsResult[] = [];
        for (const [a, b] of parts) {
          const part: InverseDynamicsInput = {
            count: b - a,
            dof,
            nq,
            q: slice(input.q, a * nq, b * nq) ?? [],
            qd: slice(input.qd, a * dof, b * dof) ?? [],
            qdd: slice(input.qdd, a * dof, b * dof) ?? [],
          };
          if (input.payload !== undefined) part.payload = input.payload;
          const wrench = slice(input.tipWrench, 6 * a, 6 * b);
          if (wrench !== undefined) part.tipWrench = wrench;
          const ws = sliceWrenches(input.wrenches, a, b);
          if (ws !== undefined) part.wrenches = ws;
          results.push(await this.inverseDynamicsSplit(modelId, part, call));
        }
        return { ...joined(results), tau: concat(results.map((r) => r.tau)) };
      }
      const res = await this.unary<{ tau: number[] } & AnswerMsg>(
        (md, o, cb) =>
          this.stub.InverseDynamics(
            {
              model_id: modelId,
              count,
              dof,
              q: toArray(input.q),
              qd: toArray(input.qd),
              qdd: toArray(input.qdd),
              tip_wrench: toArray(input.tipWrench),
              payload: payloadToProto(input.payload),
              wrenches,
            },
            md,
            o,
            cb,
          ),
        call,
        'InverseDynamics',
      );
      return { ...answer(res), tau: toF64(res.tau) };
    });
  }

  /**
   * qdd = I(q)^-1 (tau + sum J_k^T w_k - C(q, qd) qd - g(q)) for a batch (the external wrenches w_k of
   * input.wrenches), by route 'saha' (default), 'fixman' (serial chains) or 'cholesky'.
   */
  forwardDynamics(modelId: string, raw: ForwardDynamicsInput, call?: CallOptions): Promise<ForwardDynamicsResult> {
    return this.resplit(() => this.forwardDynamicsSplit(modelId, raw, call), call);
  }

  private forwardDynamicsSplit(modelId: string, raw: ForwardDynamicsInput, call?: CallOptions): Promise<ForwardDynamicsResult> {
    return this.withModel(modelId, async () => {
      const input = flatten(raw, ['q', 'qd', 'tau']);
      const route = routeToProto(input.route);
      const wrenches = wrenchesToProto(input.wrenches);
      const { count, dof, nq } = await this.shape(modelId, input.q, input, call);
      const parts = await this.parts(
        count,
        [[input.q, nq], [input.qd, dof], [input.tau, dof], ...wrenchArrays(input.wrenches)],
        call,
      );
      if (parts.length > 1) {
        const results: ForwardDynamicsResult[] = [];
        for (const [a, b] of parts) {
          const part: ForwardDynamicsInput = {
            count: b - a,
            dof,
            nq,
            q: slice(input.q, a * nq, b * nq) ?? [],
            qd: slice(input.qd, a * dof, b * dof) ?? [],
            tau: slice(input.tau, a * dof, b * dof) ?? [],
          };
          if (input.route !== undefined) part.route = input.route;
          if (input.payload !== undefined) part.payload = input.payload;
          const ws = sliceWrenches(input.wrenches, a, b);
          if (ws !== undefined) part.wrenches = ws;
          results.push(await this.forwardDynamicsSplit(modelId, part, call));
        }
        const route0 = results[0]?.route ?? 'saha';
        return { ...joined(results), qdd: concat(results.map((r) => r.qdd)), route: route0 };
      }
      const res = await this.unary<{ qdd: number[]; route: string } & AnswerMsg>(
        (md, o, cb) =>
          this.stub.ForwardDynamics(
            {
              model_id: modelId,
              count,
              dof,
              q: toArray(input.q),
              qd: toArray(input.qd),
              tau: toArray(input.tau),
              route,
              payload: payloadToProto(input.payload),
              wrenches,
            },
            md,
            o,
            cb,
          ),
        call,
        'ForwardDynamics',
      );
      return { ...answer(res), qdd: toF64(res.qdd), route: routeFromProto(res.route) };
    });
  }

  /** I(q), U, D (I = U D U^T) and log det I per state; with the flags also C, the bias, g(q), I^-1. */
  fullFactor(modelId: string, raw: FullFactorInput, call?: CallOptions): Promise<FullFactorResult> {
    return this.resplit(() => this.fullFactorSplit(modelId, raw, call), call);
  }

  private fullFactorSplit(modelId: string, raw: FullFactorInput, call?: CallOptions): Promise<FullFactorResult> {
    return this.withModel(modelId, async () => {
      const input = flatten(raw, ['q', 'qd']);
      const { count, dof, nq } = await this.shape(modelId, input.q, input, call);
      const parts = await this.parts(count, [[input.q, nq], [input.qd, dof]], call);
      if (parts.length > 1) {
        const results: FullFactorResult[] = [];
        for (const [a, b] of parts) {
          const part: FullFactorInput = { ...input, count: b - a, dof, nq, q: slice(input.q, a * nq, b * nq) ?? [] };
          const qd = slice(input.qd, a * dof, b * dof);
          if (qd !== undefined) part.qd = qd;
          results.push(await this.fullFactorSplit(modelId, part, call));
        }
        const all = (pick: (r: FullFactorResult) => Float64Array | undefined): Float64Array | undefined =>
          concatAll(results, pick);
        const result: FullFactorResult = {
          ...joined(results),
          inertia: concat(results.map((r) => r.inertia)),
          u: concat(results.map((r) => r.u)),
          d: concat(results.map((r) => r.d)),
          logDet: concat(results.map((r) => r.logDet)),
        };
        const convective = all((r) => r.convective);
        const bias = all((r) => r.bias);
        const gravityTorque = all((r) => r.gravityTorque);
        const inverse = all((r) => r.inverse);
        if (convective) result.convective = convective;
        if (bias) result.bias = bias;
        if (gravityTorque) result.gravityTorque = gravityTorque;
        if (inverse) result.inverse = inverse;
        return result;
      }
      const res = await this.unary<
        {
          inertia: number[];
          u: number[];
          d: number[];
          log_det: number[];
          convective: number[];
          bias: number[];
          gravity_torque: number[];
          inverse: number[];
        } & AnswerMsg
      >(
        (md, o, cb) =>
          this.stub.FullFactor(
            {
              model_id: modelId,
              count,
              dof,
              q: toArray(input.q),
              qd: toArray(input.qd),
              convective: input.convective === true,
              bias: input.bias === true,
              gravity_torque: input.gravityTorque === true,
              inverse: input.inverse === true,
              payload: payloadToProto(input.payload),
            },
            md,
            o,
            cb,
          ),
        call,
        'FullFactor',
      );
      const result: FullFactorResult = {
        ...answer(res),
        inertia: toF64(res.inertia),
        u: toF64(res.u),
        d: toF64(res.d),
        logDet: toF64(res.log_det),
      };
      const convective = optional(res.convective, input.convective);
      const bias = optional(res.bias, input.bias);
      const gravityTorque = optional(res.gravity_torque, input.gravityTorque);
      const inverse = optional(res.inverse, input.inverse);
      if (convective) result.convective = convective;
      if (bias) result.bias = bias;
      if (gravityTorque) result.gravityTorque = gravityTorque;
      if (inverse) result.inverse = inverse;
      return result;
    });
  }

  // ---- planning -----------------------------------------------------------------------------------------

  /**
   * A frame's pose per state (input.link; '' the tip), or the poses of several frames (input.links), and on
   * request the Jacobian of a point on each, (dJ/dt) qd (needs qd), the operational-space inertia, the poses
   * of every frame, the centre of mass and its Jacobian, the centroidal map and momentum (needs qd).
   */
  kinematics(modelId: string, raw: KinematicsInput, call?: CallOptions): Promise<KinematicsResult> {
    return this.resplit(() => this.kinematicsSplit(modelId, raw, call), call);
  }

  private kinematicsSplit(modelId: string, raw: KinematicsInput, call?: CallOptions): Promise<KinematicsResult> {
    return this.withModel(modelId, async () => {
      const input = flatten(raw, ['q', 'qd']);
      const reference = referenceToProto(input.reference, 'reference');
      if (input.links !== undefined && (!Array.isArray(input.links) || input.links.some((l) => typeof l !== 'string'))) {
        throw invalid('links: expected an array of frame names');
      }
      const { count, dof, nq } = await this.shape(modelId, input.q, input, call);
      const parts = await this.parts(count, [[input.q, nq], [input.qd, dof]], call);
      if (parts.length > 1) {
        const results: KinematicsResult[] = [];
        for (const [a, b] of parts) {
          const part: KinematicsInput = { ...input, count: b - a, dof, nq, q: slice(input.q, a * nq, b * nq) ?? [] };
          const qd = slice(input.qd, a * dof, b * dof);
          if (qd !== undefined) part.qd = qd;
          results.push(await this.kinematicsSplit(modelId, part, call));
        }
        const result: KinematicsResult = {
          ...joined(results),
          rotation: concat(results.map((r) => r.rotation)),
          origin: concat(results.map((r) => r.origin)),
        };
        const jacobian = concatAll(results, (r) => r.jacobian);
        const jdotQd = concatAll(results, (r) => r.jdotQd);
        const lambda = concatAll(results, (r) => r.lambda);
        const frameRotations = concatAll(results, (r) => r.frameRotations);
        const frameOrigins = concatAll(results, (r) => r.frameOrigins);
        if (jacobian) result.jacobian = jacobian;
        if (jdotQd) result.jdotQd = jdotQd;
        if (lambda) result.lambda = lambda;
        if (frameRotations) result.frameRotations = frameRotations;
        if (frameOrigins) result.frameOrigins = frameOrigins;
        for (const key of ['com', 'mass', 'comJacobian', 'centroidal', 'centroidalMomentum'] as const) {
          const joinedOutput = concatAll(results, (r) => r[key]);
          if (joinedOutput) result[key] = joinedOutput;
        }
        return result;
      }
      const rows = input.lambdaRows ?? 'full';
      const res = await this.unary<
        {
          rotation: number[];
          origin: number[];
          jacobian: number[];
          jdot_qd: number[];
          lambda: number[];
          frame_rotations: number[];
          frame_origins: number[];
          com: number[];
          mass: number[];
          com_jacobian: number[];
          centroidal: number[];
          centroidal_momentum: number[];
        } & AnswerMsg
      >(
        (md, o, cb) =>
          this.stub.Kinematics(
            {
              model_id: modelId,
              count,
              dof,
              q: toArray(input.q),
              qd: toArray(input.qd),
              link: input.link ?? '',
              point: toVec3(input.point ?? [0, 0, 0], 'point'),
              reference,
              jacobian: input.jacobian === true,
              jdot_qd: input.jdotQd === true,
              lambda: input.lambda === true,
              lambda_rows: rows === 'linear' ? 'TASK_ROWS_LINEAR' : rows === 'angular' ? 'TASK_ROWS_ANGULAR' : 'TASK_ROWS_FULL',
              all_frames: input.allFrames === true,
              payload: payloadToProto(input.payload),
              links: input.links === undefined ? [] : [...input.links],
              center_of_mass: input.centerOfMass === true,
              com_jacobian: input.comJacobian === true,
              centroidal: input.centroidal === true,
              centroidal_momentum: input.centroidalMomentum === true,
            },
            md,
            o,
            cb,
          ),
        call,
        'Kinematics',
      );
      const result: KinematicsResult = { ...answer(res), rotation: toF64(res.rotation), origin: toF64(res.origin) };
      const jacobian = optional(res.jacobian, input.jacobian);
      const jdotQd = optional(res.jdot_qd, input.jdotQd);
      const lambda = optional(res.lambda, input.lambda);
      const frameRotations = optional(res.frame_rotations, input.allFrames);
      const frameOrigins = optional(res.frame_origins, input.allFrames);
      if (jacobian) result.jacobian = jacobian;
      if (jdotQd) result.jdotQd = jdotQd;
      if (lambda) result.lambda = lambda;
      if (frameRotations) result.frameRotations = frameRotations;
      if (frameOrigins) result.frameOrigins = frameOrigins;
      const com = optional(res.com, input.centerOfMass);
      const mass = optional(res.mass, input.centerOfMass);
      const comJacobian = optional(res.com_jacobian, input.comJacobian);
      const centroidal = optional(res.centroidal, input.centroidal);
      const centroidalMomentum = optional(res.centroidal_momentum, input.centroidalMomentum);
      if (com) result.com = com;
      if (mass) result.mass = mass;
      if (comJacobian) result.comJacobian = comJacobian;
      if (centroidal) result.centroidal = centroidal;
      if (centroidalMomentum) result.centroidalMomentum = centroidalMomentum;
      return result;
    });
  }

  /** dtau/dq, dtau/dqd (and tau) per state, analytic (count * dof * dof row-major matrices). */
  inverseDynamicsDerivatives(
    modelId: string,
    raw: DerivativesInput & { qdd: Batch },
    call?: CallOptions,
  ): Promise<InverseDynamicsDerivatives> {
    return this.resplit(() => this.inverseDynamicsDerivativesSplit(modelId, raw, call), call);
  }

  private inverseDynamicsDerivativesSplit(
    modelId: string,
    raw: DerivativesInput & { qdd: Batch },
    call?: CallOptions,
  ): Promise<InverseDynamicsDerivatives> {
    return this.withModel(modelId, async () => {
      const input = flatten(raw, ['q', 'qd', 'qdd', 'tipWrench']);
      const parts = await this.derivativeParts(modelId, input, input.qdd, call);
      if (parts.length > 1) {
        const results: InverseDynamicsDerivatives[] = [];
        for (const [part, a, b] of parts) {
          results.push(await this.inverseDynamicsDerivativesSplit(modelId, { ...part, qdd: slice(input.qdd, a, b) ?? [] }, call));
        }
        return {
          ...joined(results),
          dtauDq: concat(results.map((r) => r.dtauDq)),
          dtauDqd: concat(results.map((r) => r.dtauDqd)),
          tau: concat(results.map((r) => r.tau)),
        };
      }
      const res = await this.derivatives(modelId, input, 'DERIVATIVE_OF_INVERSE_DYNAMICS', { qdd: toArray(input.qdd) }, call);
      return { ...answer(res), dtauDq: toF64(res.dtau_dq), dtauDqd: toF64(res.dtau_dqd), tau: toF64(res.tau) };
    });
  }

  /** dqdd/dq, dqdd/dqd, dqdd/dtau = I^-1 (and qdd) per state, analytic. */
  forwardDynamicsDerivatives(
    modelId: string,
    raw: DerivativesInput & { tau: Batch },
    call?: CallOptions,
  ): Promise<ForwardDynamicsDerivatives> {
    return this.resplit(() => this.forwardDynamicsDerivativesSplit(modelId, raw, call), call);
  }

  private forwardDynamicsDerivativesSplit(
    modelId: string,
    raw: DerivativesInput & { tau: Batch },
    call?: CallOptions,
  ): Promise<ForwardDynamicsDerivatives> {
    return this.withModel(modelId, async () => {
      const input = flatten(raw, ['q', 'qd', 'tau', 'tipWrench']);
      const parts = await this.derivativeParts(modelId, input, input.tau, call);
      if (parts.length > 1) {
        const results: ForwardDynamicsDerivatives[] = [];
        for (const [part, a, b] of parts) {
          results.push(await this.forwardDynamicsDerivativesSplit(modelId, { ...part, tau: slice(input.tau, a, b) ?? [] }, call));
        }
        return {
          ...joined(results),
          dqddDq: concat(results.map((r) => r.dqddDq)),
          dqddDqd: concat(results.map((r) => r.dqddDqd)),
          dqddDtau: concat(results.map((r) => r.dqddDtau)),
          qdd: concat(results.map((r) => r.qdd)),
        };
      }
      const res = await this.derivatives(modelId, input, 'DERIVATIVE_OF_FORWARD_DYNAMICS', { tau: toArray(input.tau) }, call);
      return {
        ...answer(res),
        dqddDq: toF64(res.dqdd_dq),
        dqddDqd: toF64(res.dqdd_dqd),
        dqddDtau: toF64(res.dqdd_dtau),
        qdd: toF64(res.qdd),
      };
    });
  }

  /**
   * K fixed-step rollouts from x0 (K * (nq + dof)) under u (K * T * nu, or T * nu shared); with linearize also
   * A_t and B_t of every step (in the tangent space: 2 dof rows and columns).
   */
  rollout(modelId: string, raw: RolloutInput, call?: CallOptions): Promise<RolloutResult> {
    return this.resplit(() => this.rolloutSplit(modelId, raw, call), call);
  }

  private rolloutSplit(modelId: string, raw: RolloutInput, call?: CallOptions): Promise<RolloutResult> {
    return this.withModel(modelId, async () => {
      const input = flatten(raw, ['x0', 'u']);
      const { nq, nv: dof, nu } = await this.sizesOf(modelId, call);
      // count * steps states per call: floor(maxStates / steps) rollouts per part; controls per rollout travel
      // with their rollout, a shared sequence goes whole to every part
      const shared = input.sharedControls === true;
      const perRollout = input.steps * nu;
      const width = nq + dof;
      const parts = await this.parts(
        input.count,
        [
          [input.x0, width],
          ...(shared ? [] : ([[input.u, perRollout]] as [Numbers, number][])),
          ...wrenchArrays(input.wrenches), // one wrench per rollout: cut with its rollouts
        ],
        call,
        input.steps,
      );
      if (parts.length > 1) {
        const results: RolloutResult[] = [];
        for (const [a, b] of parts) {
          const part: RolloutInput = {
            ...input,
            count: b - a,
            x0: slice(input.x0, width * a, width * b) ?? [],
            u: shared ? input.u : (slice(input.u, perRollout * a, perRollout * b) ?? []),
          };
          const ws = sliceWrenches(input.wrenches, a, b);
          if (ws !== undefined) part.wrenches = ws;
          results.push(await this.rolloutSplit(modelId, part, call));
        }
        const result: RolloutResult = {
          ...joined(results),
          steps: results[0]?.steps ?? input.steps,
          states: concat(results.map((r) => r.states)),
        };
        const a = concatAll(results, (r) => r.a);
        const b = concatAll(results, (r) => r.b);
        if (a) result.a = a;
        if (b) result.b = b;
        return result;
      }
      const res = await this.unary<{ steps: number; states: number[]; a: number[]; b: number[] } & AnswerMsg>(
        (md, o, cb) =>
          this.stub.Rollout(
            {
              model_id: modelId,
              count: input.count,
              dof,
              steps: input.steps,
              dt: input.dt,
              scheme: input.scheme === 'semiImplicitEuler' ? 'STEP_SCHEME_SEMI_IMPLICIT_EULER' : 'STEP_SCHEME_RK4',
              x0: toArray(input.x0),
              u: toArray(input.u),
              shared_controls: input.sharedControls === true,
              linearize: input.linearize === true,
              payload: payloadToProto(input.payload),
              wrenches: wrenchesToProto(input.wrenches),
            },
            md,
            o,
            cb,
          ),
        call,
        'Rollout',
      );
      const result: RolloutResult = { ...answer(res), steps: res.steps, states: toF64(res.states) };
      if (input.linearize === true) {
        result.a = toF64(res.a);
        result.b = toF64(res.b);
      }
      return result;
    });
  }

  /**
   * Integrates the equations of motion from (q0, qd0); yields the sample batches in time order as the
   * server streams them (the last one has `last: true` and the run's statistics). Leaving the loop early
   * cancels the run. A run that fails part way throws its DenocError after the batches before it.
   */
  async *simulate(modelId: string, input: SimulateInput, call: CallOptions = {}): AsyncGenerator<SimulationBatch> {
    let retried = false;
    let failed = 0; // attempts that failed with UNAVAILABLE before the first batch
    for (;;) {
      const dof = (await this.withModel(modelId, () => this.sizesOf(modelId, call))).nv;
      const req: SimulateRequest = {
        model_id: modelId,
        dof,
        q0: toArray(input.q0),
        qd0: toArray(input.qd0),
        t_end: input.tEnd,
        integrator: integratorToProto(input.integrator),
        route: routeToProto(input.route),
        dt_out: input.dtOut ?? 0,
        sample_times: toArray(input.sampleTimes),
        step: input.step ?? 0,
        rtol: input.rtol ?? 0,
        atol: input.atol ?? 0,
        initial_step: input.initialStep ?? 0,
        max_step: input.maxStep ?? 0,
        max_steps: input.maxSteps ?? 0,
        torque_times: toArray(input.torqueTimes),
        torque_values: input.torqueValues === undefined ? [] : toArray(flatBatch(input.torqueValues, 'torqueValues')),
        damping: toArray(input.damping),
        batch_size: input.batchSize ?? 0,
      };
      const stream = this.stub.Simulate(req, this.metadata(), this.callOptions(call, false));
      stream.on('error', () => undefined); // reported by the iterator below
      const unhook = this.hookSignal(call, () => stream.cancel());
      let received = 0;
      try {
        for await (const msg of stream as AsyncIterable<SimulateResponse__Output>) {
          received++;
          yield {
            ...answer(msg),
            t: toF64(msg.t),
            q: toF64(msg.q),
            qd: toF64(msg.qd),
            energy: toF64(msg.energy),
            kinetic: toF64(msg.kinetic),
            potential: toF64(msg.potential),
            last: msg.last,
            steps: Number(msg.steps),
            rejectedSteps: Number(msg.rejected_steps),
            evaluations: Number(msg.evaluations),
          };
        }
        return;
      } catch (e) {
        const err = toDenocError(e);
        if (received === 0 && err instanceof DenocError && err.code === Status.UNAVAILABLE && !call.signal?.aborted) {
          failed++;
          if (failed < this.retry.maxAttempts) {
            await this.backoff('Simulate', failed, err);
            continue;
          }
        }
        if (!retried && received === 0 && this.canReRegister(err, modelId)) {
          retried = true;
          await this.reRegister(modelId);
          continue;
        }
        throw err;
      } finally {
        unhook();
        stream.cancel(); // no-op after the status; stops the run when the caller left the loop early
      }
    }
  }

  /** simulate() collected: every batch concatenated (t, q, qd, energies) and the run's statistics. */
  async simulateAll(modelId: string, input: SimulateInput, call?: CallOptions): Promise<SimulationBatch> {
    const batches: SimulationBatch[] = [];
    for await (const b of this.simulate(modelId, input, call)) batches.push(b);
    const cat = (key: 't' | 'q' | 'qd' | 'energy' | 'kinetic' | 'potential'): Float64Array => {
      const out = new Float64Array(batches.reduce((n, b) => n + b[key].length, 0));
      let at = 0;
      for (const b of batches) {
        out.set(b[key], at);
        at += b[key].length;
      }
      return out;
    };
    const last = batches[batches.length - 1];
    if (last === undefined) throw errorFor(Status.INTERNAL, 'the simulation sent no samples');
    return {
      ...last,
      computeTimeNs: batches.reduce((n, b) => n + b.computeTimeNs, 0),
      count: batches.reduce((n, b) => n + b.count, 0),
      t: cat('t'),
      q: cat('q'),
      qd: cat('qd'),
      energy: cat('energy'),
      kinetic: cat('kinetic'),
      potential: cat('potential'),
    };
  }

  /** Opens a stream session (the bidirectional Stream RPC) for control loops: one state in, one answer out. */
  openStream(call: CallOptions = {}): StreamSession {
    return new StreamSession(
      {
        openStreamCall: (o: CallOptions): StreamCall => {
          const s = this.stub.Stream(this.metadata(), this.callOptions(o, false));
          const unhook = this.hookSignal(o, () => s.cancel());
          s.on('status', unhook);
          return s;
        },
        reRegisterIfKnown: async (modelId: string, err: DenocError): Promise<boolean> => {
          if (!this.canReRegister(err, modelId)) return false;
          await this.reRegister(modelId);
          return true;
        },
      },
      call,
    );
  }

  // ---- internals ----------------------------------------------------------------------------------------

  private commonRegisterFields(req: RegisterModelRequest, options: RegisterOptions): void {
    if (options.name !== undefined) req.name = options.name;
    if (options.gravity !== undefined) req.gravity = toVec3(options.gravity, 'gravity');
  }

  private async register(req: RegisterModelRequest, call?: CallOptions): Promise<RegisteredModel> {
    const res = await this.unary<RegisterModelResponse__Output>(
      (md, o, cb) => this.stub.RegisterModel(req, md, o, cb),
      call,
      'RegisterModel',
    );
    const info = modelInfoFromProto(res.model);
    this.sources.set(res.model_id, req);
    this.sizes.set(res.model_id, { nq: info.nq, nv: info.nv, nu: info.nu });
    return { ...info, created: res.created, computeTimeNs: Number(res.compute_time_ns) };
  }

  private async describe(modelId: string, call?: CallOptions): Promise<ModelInfo> {
    const res = await this.unary<{ model: Parameters<typeof modelInfoFromProto>[0] }>(
      (md, o, cb) => this.stub.GetModel({ model_id: modelId }, md, o, cb),
      call,
      'GetModel',
    );
    const info = modelInfoFromProto(res.model);
    this.sizes.set(modelId, { nq: info.nq, nv: info.nv, nu: info.nu });
    return info;
  }

  /** nq, nv (= dof) and nu of a model: known from its registration or a listing, else asked once with GetModel. */
  private async sizesOf(modelId: string, call?: CallOptions): Promise<Sizes> {
    const known = this.sizes.get(modelId);
    if (known !== undefined) return known;
    const info = await this.describe(modelId, call);
    return { nq: info.nq, nv: info.nv, nu: info.nu };
  }

  /**
   * count, dof and nq of a batch: dof given or the model's nv; nq given, or the model's with a given dof
   * (a moving root's extra coordinate kept: dof + 1 floating); count given or q.length / nq.
   */
  private async shape(
    modelId: string,
    q: ArrayLike<number>,
    s: BatchShape,
    call?: CallOptions,
  ): Promise<{ count: number; dof: number; nq: number }> {
    let dof = s.dof;
    let nq = s.nq;
    if (dof === undefined || nq === undefined) {
      const model = await this.sizesOf(modelId, call);
      dof ??= model.nv;
      nq ??= model.nq - model.nv + dof;
    }
    const count = s.count ?? (nq > 0 ? Math.max(1, Math.floor(q.length / nq)) : 1);
    for (const [name, v] of [
      ['count', count],
      ['dof', dof],
      ['nq', nq],
    ] as const) {
      if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) {
        throw invalid(`${name} ${v} is not an unsigned 32-bit integer`);
      }
    }
    return { count, dof, nq };
  }

  private async derivatives(
    modelId: string,
    input: Flat<DerivativesInput>,
    of: 'DERIVATIVE_OF_INVERSE_DYNAMICS' | 'DERIVATIVE_OF_FORWARD_DYNAMICS',
    third: { qdd: number[] } | { tau: number[] },
    call?: CallOptions,
  ): Promise<
    {
      dtau_dq: number[];
      dtau_dqd: number[];
      tau: number[];
      dqdd_dq: number[];
      dqdd_dqd: number[];
      dqdd_dtau: number[];
      qdd: number[];
    } & AnswerMsg
  > {
    const { count, dof } = await this.shape(modelId, input.q, input, call);
    return this.unary(
      (md, o, cb) =>
        this.stub.Derivatives(
          {
            model_id: modelId,
            count,
            dof,
            of,
            q: toArray(input.q),
            qd: toArray(input.qd),
            ...third,
            tip_wrench: toArray(input.tipWrench),
            payload: payloadToProto(input.payload),
            wrenches: wrenchesToProto(input.wrenches),
          },
          md,
          o,
          cb,
        ),
      call,
      'Derivatives',
    );
  }

  /**
   * The [from, to) state ranges a batch of `count` states is sent in: one range when it fits in the server's
   * maxStates, or when an array's length is not count * its width (a shape the server refuses, sent as is).
   */
  private async parts(
    count: number,
    arrays: readonly (readonly [Numbers | undefined, number])[],
    call?: CallOptions,
    statesPerItem = 1,
  ): Promise<[number, number][]> {
    const whole: [number, number][] = [[0, count]];
    if (count <= 1 || arrays.some(([a, w]) => a !== undefined && a.length !== count * w)) return whole;
    if (!Number.isInteger(statesPerItem) || statesPerItem <= 0) return whole;
    // each item counts statesPerItem states (a rollout of T steps: T); one item above the limit: as it is
    const limit = Math.floor((await this.maxStates(call)) / statesPerItem);
    if (limit <= 0 || count <= limit) return whole;
    const out: [number, number][] = [];
    for (let a = 0; a < count; a += limit) out.push([a, Math.min(a + limit, count)]);
    return out;
  }

  /**
   * The parts of a Derivatives batch (split as parts() says): each part's input without its third array
   * (qdd or tau, given to the caller as the value range [from, to) of that array).
   */
  private async derivativeParts(
    modelId: string,
    input: Flat<DerivativesInput>,
    third: Numbers,
    call?: CallOptions,
  ): Promise<[DerivativesInput, number, number][]> {
    const { count, dof, nq } = await this.shape(modelId, input.q, input, call);
    const parts = await this.parts(
      count,
      [[input.q, nq], [input.qd, dof], [third, dof], [input.tipWrench, 6], ...wrenchArrays(input.wrenches)],
      call,
    );
    return parts.map(([a, b]) => {
      const part: DerivativesInput = {
        count: b - a,
        dof,
        nq,
        q: slice(input.q, a * nq, b * nq) ?? [],
        qd: slice(input.qd, a * dof, b * dof) ?? [],
      };
      const wrench = slice(input.tipWrench, 6 * a, 6 * b);
      if (wrench !== undefined) part.tipWrench = wrench;
      const ws = sliceWrenches(input.wrenches, a, b);
      if (ws !== undefined) part.wrenches = ws;
      if (input.payload !== undefined) part.payload = input.payload;
      return [part, a * dof, b * dof];
    });
  }

  /**
   * Runs send, a batch call split by the kept maxStates (an xSplit method, whose parts are sent by the same
   * method). When the server refuses it with RESOURCE_EXHAUSTED naming a limit this client keeps
   * (namesCachedLimit), the kept limits are dropped and read again, once; when maxStates shrank, send runs once
   * more, split by the new limit, else the refusal is thrown. A refusal of that second run is thrown as it is:
   * one re-read per call.
   */
  private async resplit<T>(send: () => Promise<T>, call?: CallOptions): Promise<T> {
    const before = this.maxStatesKnown;
    try {
      return await send();
    } catch (e) {
      if (!(await this.limitsShrank(e, before, call))) throw toDenocError(e);
    }
    return send();
  }

  /**
   * Whether `refusal` names a kept limit and maxStates, dropped and asked again, is now smaller than the one the
   * batch was split by (`kept`, the promise kept when the call began, else the one kept now). False, with the
   * refusal to be thrown, when the server does not answer the new question.
   */
  private async limitsShrank(refusal: unknown, kept: Promise<number> | undefined, call?: CallOptions): Promise<boolean> {
    if (!namesCachedLimit(refusal)) return false;
    const before = kept ?? this.maxStatesKnown;
    this.maxStatesKnown = undefined;
    if (before === undefined) return false; // the batch was not split by a kept limit (one item)
    try {
      const was = await before;
      const now = await this.maxStates(call);
      return now > 0 && (was === 0 || now < was);
    } catch {
      return false; // the server's refusal says more than this failure
    }
  }

  private canReRegister(err: unknown, modelId: string): boolean {
    if (err instanceof DenocError && err.code === Status.NOT_FOUND && wasDeleted(err.details)) {
      this.sources.delete(modelId); // deleted on purpose (by any client): not brought back
      return false;
    }
    return (
      this.options.reRegister !== false &&
      err instanceof DenocError &&
      err.code === Status.NOT_FOUND &&
      this.sources.has(modelId)
    );
  }

  /** Runs fn; on NOT_FOUND for a model whose source this client holds, re-registers it and runs fn again. */
  private async withModel<T>(modelId: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      const err = toDenocError(e);
      if (!this.canReRegister(err, modelId)) throw err;
      await this.reRegister(modelId);
      return await fn();
    }
  }

  /** Registers the remembered source of modelId again (concurrent callers share one registration). */
  private reRegister(modelId: string): Promise<void> {
    let running = this.inFlightRegistrations.get(modelId);
    if (running === undefined) {
      const source = this.sources.get(modelId);
      if (source === undefined) {
        return Promise.reject(errorFor(Status.NOT_FOUND, `model ${modelId}: no source to register again`));
      }
      running = this.unary<RegisterModelResponse__Output>(
        (md, o, cb) => this.stub.RegisterModel(source, md, o, cb),
        undefined,
        'RegisterModel',
      )
        .then((res) => {
          if (res.model_id !== modelId) {
            throw errorFor(
              Status.FAILED_PRECONDITION,
              `re-registering model ${modelId} gave id ${res.model_id}: the server computes ids differently`,
            );
          }
          this.reRegistrations++;
        })
        .finally(() => this.inFlightRegistrations.delete(modelId));
      this.inFlightRegistrations.set(modelId, running);
    }
    return running;
  }

  private metadata(): grpc.Metadata {
    const md = new grpc.Metadata();
    if (this.options.token !== undefined && this.options.token !== '') {
      md.set('authorization', `Bearer ${this.options.token}`);
    }
    return md;
  }

  private callOptions(call: CallOptions | undefined, unary: boolean): grpc.CallOptions {
    const timeout = call?.timeoutMs ?? (unary ? (this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS) : undefined);
    return timeout === undefined ? {} : { deadline: Date.now() + timeout };
  }

  /** Calls cancel when call.signal aborts; returns the function that removes the hook. */
  private hookSignal(call: CallOptions | undefined, cancel: () => void): () => void {
    const signal = call?.signal;
    if (signal === undefined) return () => undefined;
    if (signal.aborted) {
      cancel();
      return () => undefined;
    }
    signal.addEventListener('abort', cancel, { once: true });
    return () => signal.removeEventListener('abort', cancel);
  }

  /**
   * One unary call with the retry policy: an idempotent call (all but DeleteModel) that fails with UNAVAILABLE
   * is sent again, at most retry.maxAttempts attempts in all, after waits growing from retry.initialBackoffMs
   * by retry.multiplier up to retry.maxBackoffMs, each scaled by a random factor 1 +- retry.jitter and reported
   * to onRetry first. `name` is the RPC's (for onRetry).
   */
  private async unary<Res>(start: UnaryStart<Res>, call: CallOptions | undefined, name: string, idempotent = true): Promise<Res> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.unaryOnce(start, call);
      } catch (e) {
        const err = toDenocError(e);
        const again = err instanceof DenocError && err.code === Status.UNAVAILABLE && idempotent;
        if (!again || attempt >= this.retry.maxAttempts || call?.signal?.aborted === true) throw err;
        await this.backoff(name, attempt, err);
      }
    }
  }

  /**
   * Reports attempt `attempt` of `name`, failed with `err`, to onRetry and waits before the next one:
   * initialBackoffMs * multiplier^(attempt - 1), capped, scaled by a random factor 1 +- jitter.
   */
  private async backoff(name: string, attempt: number, err: DenocError): Promise<void> {
    const r = this.retry;
    const base = Math.min(r.initialBackoffMs * r.multiplier ** (attempt - 1), r.maxBackoffMs);
    const backoffMs = Math.round(base * (1 + r.jitter * (2 * Math.random() - 1)));
    this.retries++;
    this.options.onRetry?.({ call: name, attempt, code: err.code, message: err.details, backoffMs });
    await new Promise((resolve) => setTimeout(resolve, backoffMs));
  }

  private unaryOnce<Res>(start: UnaryStart<Res>, call?: CallOptions): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      let unhook: () => void = () => undefined;
      const c = start(this.metadata(), this.callOptions(call, true), (err, res) => {
        unhook();
        if (err) reject(toDenocError(err));
        else if (res === undefined) reject(errorFor(Status.INTERNAL, 'empty answer'));
        else resolve(res);
      });
      unhook = this.hookSignal(call, () => c.cancel());
    });
  }
}
