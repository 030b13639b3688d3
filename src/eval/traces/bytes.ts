/**
 * The bytes of one trace input (./records.ts; docs/recorded-traces.md,
 * "Files and formats"): a file, or standard input for `-`, decompressed when
 * its content is gzip (the magic bytes 1f 8b, whatever the name), and let go
 * of when its reader is done or has failed.
 */
import { closeSync, createReadStream, openSync, readSync, statSync } from "node:fs";
import { createGunzip } from "node:zlib";
import { Readable } from "node:stream";
import { DataValidationError } from "../../errors.js";

/** True when `bytes` start with gzip's magic bytes (RFC 1952: 1f 8b). */
export const isGzip = (bytes: Uint8Array): boolean => bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;

/** True when the file starts with gzip's magic bytes (false when it cannot be read: the reader names that). */
export function fileIsGzip(file: string): boolean {
  if (file === "-") return false;
  try {
    const fd = openSync(file, "r");
    try {
      const b = Buffer.alloc(2);
      return readSync(fd, b, 0, 2, 0) === 2 && isGzip(b);
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
}

const cannotRead = (file: string, e: unknown) =>
  new DataValidationError([
    {
      file,
      message: `cannot read the file (${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : ((e as NodeJS.ErrnoException).code ?? (e as Error).message)})`,
    },
  ]);

/** The bytes of a file, and `close`, which lets the file go (a no-op for stdin) once its reader is done, or has failed. */
export type Bytes = AsyncIterator<Buffer> & { close(): void };

/**
 * The bytes of `file` (stdin for `-`), decompressed when they are gzip.
 * An iterator without `return`, so that a reader that stops early leaves it
 * open for the next reader (the lines first, then the streaming parser);
 * `forEachRecord` closes it when it is done with the file.
 */
export async function openBytes(file: string): Promise<Bytes> {
  let raw: Readable;
  if (file === "-") raw = process.stdin;
  else {
    let st;
    try {
      st = statSync(file);
    } catch (e) {
      throw cannotRead(file, e);
    }
    if (!st.isFile())
      throw new DataValidationError([{ file, message: "expected a regular file (or a folder of trace files)" }]);
    raw = createReadStream(file, { highWaterMark: 1 << 20 });
  }
  const close = () => {
    if (raw !== process.stdin) raw.destroy();
  };
  const it = (raw as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  const first = await it.next().catch((e: unknown) => {
    close();
    throw cannotRead(file, e);
  });
  if (first.done === true) return { next: () => Promise.resolve({ done: true, value: undefined }), close };
  const head = first.value;
  if (!isGzip(head)) {
    let pending: Buffer | null = head;
    return {
      next: async () => {
        if (pending !== null) {
          const value = pending;
          pending = null;
          return { done: false, value };
        }
        return it.next().catch((e: unknown) => {
          throw cannotRead(file, e);
        });
      },
      close,
    };
  }
  // gzip: the compressed bytes (head first) piped through gunzip.
  const gunzip = createGunzip({ chunkSize: 1 << 20 });
  const compressed = Readable.from(
    (async function* () {
      yield head;
      for (;;) {
        const r = await it.next();
        if (r.done === true) return;
        yield r.value;
      }
    })(),
  );
  compressed.on("error", (e) => gunzip.destroy(e));
  compressed.pipe(gunzip);
  const out = (gunzip as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  return {
    next: () =>
      out.next().catch((e: unknown) => {
        throw new DataValidationError([
          {
            file,
            message: `the file starts as gzip (bytes 1f 8b) but does not decompress (${(e as Error).message}); a truncated or damaged .gz? Compress it again, or give the file uncompressed`,
          },
        ]);
      }),
    close: () => {
      gunzip.destroy();
      close();
    },
  };
}
