/**
 * The serializer of the checkpointer a sweep of retrace's own graph gives its
 * graph (src/app/own-graph/parallel.ts, docs/throughput.md#long-conversations):
 * values are kept by reference, never serialized.
 *
 * LangGraph's `MemorySaver` serializes every checkpoint whole (its default
 * JSON serializer), and a thread's state grows with its turns (the
 * conversation's messages, a retrieval trace a turn): a turn of a 100-turn
 * conversation paid for writing and reading back the 99 before it, so the
 * sweep's cost grew with the square of a conversation's length. The sweep's
 * checkpointer is private to the sweep (each finished case's thread is
 * deleted), and retrace's own nodes never change a state value in place
 * (every reducer builds a new value: src/graph/state.ts), so the values can
 * be kept as they are: each stored blob is an empty byte array carrying the
 * value, and it goes when `MemorySaver` drops the blob (a deleted thread).
 * Every turn then costs the same whatever came before it. Only for retrace's
 * own graph: a graph of yours (`--graph`) keeps the checkpointer it brings, or
 * a default `MemorySaver`.
 */

import { MemorySaver } from "@langchain/langgraph";

/** The key of the value a stored blob carries. */
const VALUE = Symbol("retrace.checkpointValue");

type Blob = Uint8Array & { [VALUE]?: unknown };

/** LangGraph's SerializerProtocol (@langchain/langgraph-checkpoint), structurally. */
export interface CheckpointSerde {
  dumpsTyped(data: unknown): Promise<[string, Uint8Array]>;
  loadsTyped(type: string, data: Uint8Array | string): Promise<unknown>;
}

/** A serializer that keeps each value by reference (see above). */
export function referenceSerde(): CheckpointSerde {
  return {
    dumpsTyped(data) {
      const blob: Blob = new Uint8Array(0);
      blob[VALUE] = data;
      return Promise.resolve(["reference", blob]);
    },
    loadsTyped(_type, data) {
      if (typeof data === "string" || !(VALUE in data))
        return Promise.reject(new Error("a checkpoint blob not written by the reference serializer"));
      return Promise.resolve((data as Blob)[VALUE]);
    },
  };
}

/** The checkpointer of a sweep of retrace's own graph: LangGraph's MemorySaver over `referenceSerde` (the sweep deletes each finished case's thread). */
export function sweepCheckpointer(): MemorySaver {
  return new MemorySaver(referenceSerde() as ConstructorParameters<typeof MemorySaver>[0]);
}
