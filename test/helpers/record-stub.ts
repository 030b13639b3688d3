/**
 * A local HTTP stand-in for a service's API (LangSmith, Langfuse) on
 * 127.0.0.1: answers each request with what `answer` returns (default
 * `{}` with 200) and records every request, its method, path and JSON body,
 * so that a test can check what a real client sent.
 */
import { spawn } from "node:child_process";
import http from "node:http";

export interface StubRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

export async function startRecordingStub(
  answer: (r: StubRequest) => { status: number; body: unknown } | undefined = () => undefined,
): Promise<{ url: string; requests: StubRequest[]; close: () => Promise<void> }> {
  const requests: StubRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      let body: unknown = text;
      try {
        body = text === "" ? undefined : JSON.parse(text);
      } catch {
        // not JSON: kept as text
      }
      const r: StubRequest = {
        method: req.method ?? "",
        path: new URL(req.url ?? "/", "http://stub").pathname,
        headers: req.headers,
        body,
      };
      requests.push(r);
      const a = answer(r) ?? { status: 200, body: {} };
      res.writeHead(a.status, { "content-type": "application/json" }).end(JSON.stringify(a.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** Runs `node args…` without blocking this process's event loop (a stub served here must answer it): exit status and output. */
export function runNode(
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: opts.cwd, env: opts.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGTERM"), opts.timeoutMs ?? 60_000);
    child.on("error", reject);
    child.on("close", (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}
