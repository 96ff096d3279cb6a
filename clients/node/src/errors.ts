import { Metadata, status as Status } from '@grpc/grpc-js';

/**
 * A failed call: the gRPC status code and the server's message.
 *
 * `code` is the numeric gRPC status (compare with `Status.NOT_FOUND` etc.), `codeName` its name
 * ('NOT_FOUND'), `details` the server's message verbatim (e.g. "q has 13 values, expected count*dof = 14"),
 * and `message` is "<codeName>: <details>".
 */
export class DenocError extends Error {
  readonly code: Status;
  readonly codeName: string;
  readonly details: string;
  readonly metadata: Metadata | undefined;

  constructor(code: Status, details: string, metadata?: Metadata) {
    const codeName = Status[code] ?? `CODE_${code}`;
    super(`${codeName}: ${details}`);
    this.name = 'DenocError';
    this.code = code;
    this.codeName = codeName;
    this.details = details;
    this.metadata = metadata;
  }
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
    return new DenocError(
      s.code as Status,
      details,
      s.metadata instanceof Metadata ? s.metadata : undefined,
    );
  }
  return e;
}
