// A stream session over the bidirectional Stream RPC: one state in, one answer out, in order, on one call.
import type { ClientDuplexStream } from '@grpc/grpc-js';
import { status as Status } from '@grpc/grpc-js';

import { flatten, payloadToProto, routeToProto, streamAnswerFromProto, toArray, wrenchesToProto } from './convert';
import { DenocError, errorFor, toDenocError } from './errors';
import type { CallOptions, ForwardRoute, LinkWrench, Numbers, Payload, StreamAnswer } from './types';
import type { StreamRequest } from '../generated/denoc/v1/StreamRequest';
import type { StreamResponse__Output } from '../generated/denoc/v1/StreamResponse';

export type StreamCall = ClientDuplexStream<StreamRequest, StreamResponse__Output>;

/** What a session needs from its client. */
export interface StreamHost {
  openStreamCall(options: CallOptions): StreamCall;
  /** Re-registers `modelId` from the source this client registered it with; false if it has none. */
  reRegisterIfKnown(modelId: string, error: DenocError): Promise<boolean>;
}

interface Pending {
  req: StreamRequest & { sequence: number; model_id: string };
  resolve: (a: StreamAnswer) => void;
  reject: (e: unknown) => void;
  retried: boolean;
}

/**
 * One bidirectional stream for a control loop. Each call sends one state and resolves with its answer;
 * calls may be pipelined (answers come back in order). A bad message ends the server's stream with its
 * status: that request and every one sent after it reject with the DenocError, and the session is over
 * (later calls reject with the same error). When the server answers NOT_FOUND for a model this client
 * registered, the session re-registers it, opens a new stream and resends the unanswered requests (once per
 * request). close() half-closes the stream and resolves when the server has answered everything.
 */
export class StreamSession {
  private call: StreamCall | undefined;
  private readonly pending: Pending[] = [];
  private sequence = 0;
  private failure: unknown = undefined;
  private ending = false;
  private reopening = false;
  private finished = false;
  private readonly done: Promise<void>;
  private resolveDone: () => void = () => undefined;

  constructor(
    private readonly host: StreamHost,
    private readonly options: CallOptions = {},
  ) {
    this.done = new Promise<void>((resolve) => {
      this.resolveDone = resolve;
    });
    this.open();
  }

  /** The payload held by the tip (or payload.link) that every following message declares (undefined: none). */
  payload: Payload | undefined = undefined;

  /**
   * tau for one state (q: nq values, qd and qdd: dof); tipWrench: [mx, my, mz, fx, fy, fz] on the last link,
   * or none; wrenches: external wrenches on named frames, 6 values each (at most the server's maxWrenches).
   */
  inverseDynamics(
    modelId: string,
    q: Numbers,
    qd: Numbers,
    qdd: Numbers,
    tipWrench?: Numbers,
    wrenches?: readonly LinkWrench[],
  ): Promise<StreamAnswer> {
    let ws: ReturnType<typeof wrenchesToProto>;
    try {
      ws = wrenchesToProto(flatten({ wrenches }, []).wrenches);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.send({
      model_id: modelId,
      computation: 'COMPUTATION_INVERSE_DYNAMICS',
      q: toArray(q),
      qd: toArray(qd),
      qdd: toArray(qdd),
      tip_wrench: toArray(tipWrench),
      payload: payloadToProto(this.payload),
      wrenches: ws,
      sequence: 0,
    });
  }

  /**
   * qdd for one state (q: nq values, qd and tau: dof) by the given route (default 'saha'), with external
   * wrenches on named frames (6 values each) when given.
   */
  forwardDynamics(
    modelId: string,
    q: Numbers,
    qd: Numbers,
    tau: Numbers,
    route?: ForwardRoute,
    wrenches?: readonly LinkWrench[],
  ): Promise<StreamAnswer> {
    let r: ReturnType<typeof routeToProto>;
    let ws: ReturnType<typeof wrenchesToProto>;
    try {
      r = routeToProto(route);
      ws = wrenchesToProto(flatten({ wrenches }, []).wrenches);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.send({
      model_id: modelId,
      computation: 'COMPUTATION_FORWARD_DYNAMICS',
      q: toArray(q),
      qd: toArray(qd),
      tau: toArray(tau),
      route: r,
      payload: payloadToProto(this.payload),
      wrenches: ws,
      sequence: 0,
    });
  }

  /** Requests sent and not answered yet. */
  get inFlight(): number {
    return this.pending.length;
  }

  /** Half-closes the stream; resolves once the server has ended it (every answer delivered or rejected). */
  close(): Promise<void> {
    if (!this.ending) {
      this.ending = true;
      if (!this.finished && !this.reopening && this.call !== undefined) this.call.end();
    }
    return this.done;
  }

  private send(req: Pending['req']): Promise<StreamAnswer> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.ending || this.finished) {
      return Promise.reject(errorFor(Status.FAILED_PRECONDITION, 'the stream session is closed'));
    }
    req.sequence = this.sequence++;
    return new Promise<StreamAnswer>((resolve, reject) => {
      this.pending.push({ req, resolve, reject, retried: false });
      if (!this.reopening && this.call !== undefined) this.call.write(req);
    });
  }

  private open(): void {
    const call = this.host.openStreamCall(this.options);
    call.on('error', () => undefined); // the status is taken from the reader loop below
    this.call = call;
    void this.read(call);
  }

  private async read(call: StreamCall): Promise<void> {
    let error: unknown = undefined;
    try {
      for await (const msg of call as AsyncIterable<StreamResponse__Output>) {
        if (call !== this.call) return;
        const p = this.pending.shift();
        if (p === undefined) continue;
        const answer = streamAnswerFromProto(msg);
        if (answer.sequence !== p.req.sequence) {
          const e = errorFor(
            Status.INTERNAL,
            `stream answer out of order: sequence ${answer.sequence}, expected ${p.req.sequence}`,
          );
          p.reject(e);
          this.fail(e);
          this.finish();
          call.cancel();
          return;
        }
        p.resolve(answer);
      }
    } catch (e) {
      error = toDenocError(e);
    }
    if (call !== this.call || this.finished) return;
    if (error === undefined) {
      if (this.pending.length > 0) {
        this.fail(
          errorFor(Status.UNKNOWN, `the server ended the stream with ${this.pending.length} requests unanswered`),
        );
      }
      this.finish();
      return;
    }
    const head = this.pending[0];
    if (error instanceof DenocError && error.code === Status.NOT_FOUND && head !== undefined && !head.retried) {
      head.retried = true;
      this.reopening = true;
      try {
        if (await this.host.reRegisterIfKnown(head.req.model_id, error)) {
          this.reopening = false;
          this.open();
          const fresh = this.call as StreamCall | undefined;
          if (fresh !== undefined) {
            for (const p of this.pending) fresh.write(p.req);
            if (this.ending) fresh.end();
          }
          return;
        }
      } catch (e) {
        error = toDenocError(e);
      }
      this.reopening = false;
    }
    this.fail(error);
    this.finish();
  }

  private fail(error: unknown): void {
    if (this.failure === undefined) this.failure = error;
    for (const p of this.pending.splice(0)) p.reject(error);
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.resolveDone();
  }
}
