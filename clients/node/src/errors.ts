import { Metadata, status as Status } from '@grpc/grpc-js';

/**
 * A failed call: the gRPC status code and the server's message.
 *
 * `code` is the numeric gRPC status (compare with `Status.NOT_FOUND` etc.), `codeName` its name
 * ('NOT_FOUND'), `details` the server's message verbatim (e.g. "q has 13 values, expected count*dof = 14"),
 * and `message` is "<codeName>: <details>". Failures with a code the service uses are thrown as the
 * subclass for that code (NotFoundError, UnauthenticatedError, ...), so `instanceof` tells them apart;
 * every one is a DenocError. `name` is the class's name.
 */
export class DenocError extends Error {
  readonly code: Status;
  readonly codeName: string;
  readonly details: string;
  readonly metadata: Metadata | undefined;

  constructor(code: Status, details: string, metadata?: Metadata) {
    const codeName = Status[code] ?? `CODE_${code}`;
    super(`${codeName}: ${details}`);
    this.name = new.target.name;
    this.code = code;
    this.codeName = codeName;
    this.details = details;
    this.metadata = metadata;
  }
}

/** INVALID_ARGUMENT: bad shapes, non-finite values, unknown enum values, models the core rejects. */
export class InvalidArgumentError extends DenocError {
  constructor(details: string, metadata?: Metadata) {
    super(Status.INVALID_ARGUMENT, details, metadata);
  }
}

/** NOT_FOUND: a model id the server neither holds nor finds in its store. */
export class NotFoundError extends DenocError {
  constructor(details: string, metadata?: Metadata) {
    super(Status.NOT_FOUND, details, metadata);
  }
}

/** RESOURCE_EXHAUSTED: a configured limit (states, dof, message size, models, streams) was exceeded. */
export class ResourceExhaustedError extends DenocError {
  constructor(details: string, metadata?: Metadata) {
    super(Status.RESOURCE_EXHAUSTED, details, metadata);
  }
}

/** FAILED_PRECONDITION: e.g. deleting a pinned (built-in or preloaded) model. */
export class FailedPreconditionError extends DenocError {
  constructor(details: string, metadata?: Metadata) {
    super(Status.FAILED_PRECONDITION, details, metadata);
  }
}

/** ABORTED: a simulation that stopped part way (step limit, step underflow, non-finite state), or a rollout whose
 * state diverged (the step and joint are named). */
export class AbortedError extends DenocError {
  constructor(details: string, metadata?: Metadata) {
    super(Status.ABORTED, details, metadata);
  }
}

/** UNAVAILABLE: the server cannot be reached, or the TLS handshake failed (untrusted certificate, client
 * certificate missing or refused). */
export class UnavailableError extends DenocError {
  constructor(details: string, metadata?: Metadata) {
    super(Status.UNAVAILABLE, details, metadata);
  }
}

/** DEADLINE_EXCEEDED: the call's deadline passed. */
export class DeadlineExceededError extends DenocError {
  constructor(details: string, metadata?: Metadata) {
    super(Status.DEADLINE_EXCEEDED, details, metadata);
  }
}

/** PERMISSION_DENIED: the bearer token may not do this (e.g. delete another token's model). */
export class PermissionDeniedError extends DenocError {
  constructor(details: string, metadata?: Metadata) {
    super(Status.PERMISSION_DENIED, details, metadata);
  }
}

/** UNAUTHENTICATED: a bearer token is required, or the one sent is not known to the server. */
export class UnauthenticatedError extends DenocError {
  constructor(details: string, metadata?: Metadata) {
    super(Status.UNAUTHENTICATED, details, metadata);
  }
}

/** CANCELLED: the call was cancelled (an AbortSignal, a closed client). */
export class CancelledError extends DenocError {
  constructor(details: string, metadata?: Metadata) {
    super(Status.CANCELLED, details, metadata);
  }
}

/** UNIMPLEMENTED: e.g. a URDF registration on a server built without the URDF importer. */
export class UnimplementedError extends DenocError {
  constructor(details: string, metadata?: Metadata) {
    super(Status.UNIMPLEMENTED, details, metadata);
  }
}

/** INTERNAL: a bug on the server's (or the client's) side. */
export class InternalError extends DenocError {
  constructor(details: string, metadata?: Metadata) {
    super(Status.INTERNAL, details, metadata);
  }
}

type TypedError = new (details: string, metadata?: Metadata) => DenocError;

const BY_CODE = new Map<Status, TypedError>([
  [Status.INVALID_ARGUMENT, InvalidArgumentError],
  [Status.NOT_FOUND, NotFoundError],
  [Status.RESOURCE_EXHAUSTED, ResourceExhaustedError],
  [Status.FAILED_PRECONDITION, FailedPreconditionError],
  [Status.ABORTED, AbortedError],
  [Status.UNAVAILABLE, UnavailableError],
  [Status.DEADLINE_EXCEEDED, DeadlineExceededError],
  [Status.PERMISSION_DENIED, PermissionDeniedError],
  [Status.UNAUTHENTICATED, UnauthenticatedError],
  [Status.CANCELLED, CancelledError],
  [Status.UNIMPLEMENTED, UnimplementedError],
  [Status.INTERNAL, InternalError],
]);

/** The error for a status: the subclass for its code, else a plain DenocError. */
/**
 * Whether a NOT_FOUND message says the model was deleted (DeleteModel) rather than never known: the client
 * does not register such a model again behind its caller's back.
 */
export function wasDeleted(details: string): boolean {
  return details.includes(' was deleted (DeleteModel)');
}

/** The GetServerInfo fields a client keeps (DenocClient.maxStates), as whole words of a refusal's message. */
const CACHED_LIMITS = /\b(?:max_states)\b/;

/**
 * Whether a failed call is RESOURCE_EXHAUSTED naming a limit the client keeps from GetServerInfo (max_states,
 * which it splits batches by): the server that refused it takes less than the kept limit said, e.g. a replica
 * started with a smaller --max-states during a rolling upgrade. Such a refusal makes a batch call read the limits
 * again, once (docs/clients.md); any other RESOURCE_EXHAUSTED is thrown as it is.
 */
export function namesCachedLimit(err: unknown): boolean {
  return err instanceof DenocError && err.code === Status.RESOURCE_EXHAUSTED && CACHED_LIMITS.test(err.details);
}

export function errorFor(code: Status, details: string, metadata?: Metadata): DenocError {
  const Typed = BY_CODE.get(code);
  return Typed !== undefined ? new Typed(details, metadata) : new DenocError(code, details, metadata);
}

interface StatusLike {
  code?: unknown;
  details?: unknown;
  message?: unknown;
  metadata?: unknown;
}

/** Turns what grpc-js rejects with (a ServiceError) into a DenocError; anything else passes through. */
export function toDenocError(e: unknown): unknown {
  if (e instanceof DenocError) return e;
  if (e !== null && typeof e === 'object' && typeof (e as StatusLike).code === 'number') {
    const s = e as StatusLike;
    const details =
      typeof s.details === 'string' ? s.details : typeof s.message === 'string' ? s.message : String(e);
    return errorFor(s.code as Status, details, s.metadata instanceof Metadata ? s.metadata : undefined);
  }
  return e;
}
