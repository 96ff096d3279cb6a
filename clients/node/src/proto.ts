// Loads the wire contract (denoc/v1/dynamics.proto, copied from the repository's proto/ into dist/proto by
// `npm run build`) with @grpc/proto-loader and returns the generic grpc-js client constructor of
// denoc.v1.Dynamics. The options match those the types in generated/ were produced with.
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

import type { ProtoGrpcType } from '../generated/dynamics';
import type { DynamicsClient } from '../generated/denoc/v1/Dynamics';

/** Loader options; the generated types assume exactly these. */
export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true, // field names as in the proto (model_id), the wrappers expose camelCase
  longs: Number, // int64/uint64 as numbers (nanoseconds and counters stay below 2^53)
  enums: String, // enum values by name
  defaults: true, // absent scalars and repeated fields as 0 / '' / []
  oneofs: true,
};

/** The proto file loaded at run time: dist/proto/denoc/v1/dynamics.proto beside this module's dist/src. */
export const PROTO_FILE = path.resolve(__dirname, '..', 'proto', 'denoc', 'v1', 'dynamics.proto');

export type DynamicsClientConstructor = new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ChannelOptions,
) => DynamicsClient;

let cached: DynamicsClientConstructor | undefined;

/** The client constructor of denoc.v1.Dynamics (the proto is parsed once per process). */
export function dynamicsClientConstructor(): DynamicsClientConstructor {
  if (cached === undefined) {
    const definition = protoLoader.loadSync(PROTO_FILE, LOADER_OPTIONS);
    const loaded = grpc.loadPackageDefinition(definition) as unknown as ProtoGrpcType;
    cached = loaded.denoc.v1.Dynamics as unknown as DynamicsClientConstructor;
  }
  return cached;
}
