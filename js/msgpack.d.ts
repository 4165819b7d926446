// Declarations of @agentsync/client/msgpack.js: the msgpack codec of the wire.

/** A msgpack value that does not decode, or that cannot be encoded. */
export declare class MsgpackError extends Error {}

/** An ext value other than the timestamp (type -1). */
export declare class Ext {
  constructor(type: number, data: Uint8Array);
  type: number;
  data: Uint8Array;
}

export declare function encode(value: unknown): Uint8Array;
export declare function decode(input: Uint8Array | ArrayBuffer): unknown;
/** Decodes the first value of input (more may follow): [value, its length in bytes]. */
export declare function decodeFirst(input: Uint8Array | ArrayBuffer): [unknown, number];
