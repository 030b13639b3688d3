/**
 * A local HTTP proxy in front of a real Chroma server, on 127.0.0.1 only, to
 * inject the faults a real network or server produces: answering 5xx after
 * N requests of some kind, or never answering. It forwards everything else
 * unchanged and records the request headers it saw (to check credentials
 * were sent). Not a fake Chroma: every answer it passes on is the server's.
 */
import http from "node:http";
import net from "node:net";

export interface FaultProxy {
  url: string;
  /** Header maps of the requests received, in order. */
  seen: http.IncomingHttpHeaders[];
  /** Requests whose method+path matched `failWhen` and got a 500. */
  failed: string[];
  close(): Promise<void>;
}

export interface FaultPlan {
  /** Called per request with "METHOD /path"; return true to answer 500 instead of forwarding. */
  failWhen?: (what: string) => boolean;
}

export async function startFaultProxy(target: string, plan: FaultPlan = {}): Promise<FaultProxy> {
  const t = new URL(target);
  const seen: http.IncomingHttpHeaders[] = [];
  const failed: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.headers);
    const what = `${req.method} ${req.url?.split("?")[0]}`;
    if (plan.failWhen?.(what)) {
      failed.push(what);
      req.resume();
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: "InternalError", message: "injected by the test proxy" }));
      return;
    }
    const up = http.request(
      { host: t.hostname, port: t.port, method: req.method, path: req.url, headers: { ...req.headers, host: t.host } },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    up.on("error", () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    failed,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A TCP server on 127.0.0.1 that accepts connections and never answers. */
export async function startSilentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
