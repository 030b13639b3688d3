/**
 * Every answer of a Chroma store is checked before chromadb's client reads
 * it (docs/reliability.md, "Store faults"): a 2xx answer must be JSON of the
 * shape its endpoint returns (zod schemas of the parts retrace relies on;
 * extra fields pass). A server that answers 200 with an HTML page, or a
 * `/get` whose `ids` is not a list, is a `ServiceUnavailableError` (exit 3)
 * `Chroma at URL answered GET /api/v2/… with something that is not a
 * Chroma answer: <what was wrong>`, never a `data.map is not a function`
 * internal error further down.
 */
import { z } from "zod";

const nullableArray = <T extends z.ZodTypeAny>(item: T) => z.array(item).nullable().optional();
const collection = z.object({ id: z.string(), name: z.string() }).passthrough();
const count = z.number().int().nonnegative();
const metadata = z.record(z.unknown()).nullable();
const embedding = z.union([z.array(z.number()), z.string(), z.null()]);

const getAnswer = z
  .object({
    ids: z.array(z.string()),
    documents: nullableArray(z.string().nullable()),
    metadatas: nullableArray(metadata),
    embeddings: nullableArray(embedding),
    include: z.array(z.string()).optional(),
  })
  .passthrough();

const queryAnswer = z
  .object({
    ids: z.array(z.array(z.string())),
    distances: nullableArray(z.array(z.number().nullable()).nullable()),
    documents: nullableArray(z.array(z.string().nullable()).nullable()),
    metadatas: nullableArray(z.array(metadata).nullable()),
    embeddings: nullableArray(z.array(embedding).nullable()),
  })
  .passthrough();

/** What each endpoint answers, by method and path (the `{…}` parts of chromadb's routes as `[^/]+`). */
const ENDPOINTS: readonly { method: string; path: RegExp; schema: z.ZodTypeAny; empty?: boolean }[] = [
  {
    method: "GET",
    path: /^\/api\/v2\/heartbeat$/,
    schema: z.object({ "nanosecond heartbeat": z.number() }).passthrough(),
  },
  { method: "GET", path: /^\/api\/v2\/version$/, schema: z.string() },
  {
    method: "GET",
    path: /^\/api\/v2\/auth\/identity$/,
    schema: z.object({ tenant: z.string(), databases: z.array(z.string()) }).passthrough(),
  },
  { method: "GET", path: /^\/api\/v2\/tenants\/[^/]+\/databases\/[^/]+\/collections$/, schema: z.array(collection) },
  { method: "POST", path: /^\/api\/v2\/tenants\/[^/]+\/databases\/[^/]+\/collections$/, schema: collection },
  { method: "GET", path: /^\/api\/v2\/tenants\/[^/]+\/databases\/[^/]+\/collections_count$/, schema: count },
  { method: "GET", path: /^\/api\/v2\/tenants\/[^/]+\/databases\/[^/]+\/collections\/[^/]+$/, schema: collection },
  { method: "GET", path: /^\/api\/v2\/tenants\/[^/]+\/databases\/[^/]+\/collections\/[^/]+\/count$/, schema: count },
  { method: "POST", path: /^\/api\/v2\/tenants\/[^/]+\/databases\/[^/]+\/collections\/[^/]+\/get$/, schema: getAnswer },
  {
    method: "POST",
    path: /^\/api\/v2\/tenants\/[^/]+\/databases\/[^/]+\/collections\/[^/]+\/query$/,
    schema: queryAnswer,
  },
];

/** Endpoints whose answer retrace does not read (add, upsert, update, delete, …): any JSON, or nothing. */
const ANY_JSON = z.unknown();

function shortIssue(e: z.ZodError): string {
  const issue = e.issues[0];
  if (issue === undefined) return "an unexpected shape";
  const at = issue.path.length > 0 ? `\`${issue.path.join(".")}\`: ` : "";
  return `${at}${issue.message.toLowerCase()}`;
}

/** The first characters of a body, as shown in a message (one line). */
function preview(text: string): string {
  const t = text.replace(/\s+/g, " ").trim();
  return JSON.stringify(t.length > 60 ? `${t.slice(0, 60)}…` : t);
}

/**
 * Why the 2xx answer `body` to `method path` is not a Chroma answer, or
 * undefined when it is one (JSON of the endpoint's shape).
 */
export function notAChromaAnswer(
  method: string,
  path: string,
  body: Uint8Array,
  contentType: string | null,
): string | undefined {
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8");
  const endpoint = ENDPOINTS.find((e) => e.method === method && e.path.test(path));
  if (text.trim() === "") return endpoint === undefined ? undefined : "an empty body";
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    const kind = /html/i.test(contentType ?? "") || /^\s*</.test(text) ? "an HTML page" : "text that is not JSON";
    return `${kind} (${contentType ?? "no content-type"}) starting ${preview(text)}`;
  }
  const r = (endpoint?.schema ?? ANY_JSON).safeParse(value);
  return r.success ? undefined : `JSON of the wrong shape (${shortIssue(r.error)})`;
}
