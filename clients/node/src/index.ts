// denoc: TypeScript/Node client of the denoc dynamics service (denocd), on @grpc/grpc-js.
export { DenocClient, DEFAULT_RETRY, DEFAULT_TIMEOUT_MS } from './client';
export {
  AbortedError,
  CancelledError,
  DeadlineExceededError,
  DenocError,
  FailedPreconditionError,
  InternalError,
  InvalidArgumentError,
  NotFoundError,
  PermissionDeniedError,
  ResourceExhaustedError,
  UnauthenticatedError,
  UnavailableError,
  UnimplementedError,
  namesCachedLimit,
  wasDeleted,
} from './errors';
export { StreamSession } from './stream';
export { PROTO_FILE } from './proto';
export { stateOf } from './util';
export {
  QUATERNION_TOLERANCE,
  differenceConfiguration,
  integrateConfiguration,
  neutralConfiguration,
  normalizeConfiguration,
  quaternionToRotation,
} from './configuration';
export { status as Status, credentials, Metadata } from '@grpc/grpc-js';
export type * from './types';
