import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { MissingPeerError } from "../src/errors.js";
import { missingPackageOf, missingPeerError, OPTIONAL_PEERS } from "../src/peers.js";
import { ROOT } from "./helpers/cli.js";

const notFound = (message: string) => Object.assign(new Error(message), { code: "ERR_MODULE_NOT_FOUND" });

describe("optional peers", () => {
  it("are package.json's optional peer dependencies, with its ranges; each install command names the peer", () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
      peerDependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
    };
    const optional = Object.keys(pkg.peerDependenciesMeta).filter(
      (n) => pkg.peerDependenciesMeta[n]?.optional === true,
    );
    expect(Object.keys(OPTIONAL_PEERS).sort()).toEqual(optional.sort());
    for (const [name, peer] of Object.entries(OPTIONAL_PEERS)) {
      expect(peer.range).toBe(pkg.peerDependencies[name]);
      expect(peer.install).toMatch(new RegExp(`npm install .*${name.replace("/", "\\/")}`));
    }
  });

  it("missingPackageOf reads the package name out of Node's module-not-found errors only", () => {
    expect(missingPackageOf(notFound("Cannot find package 'tsx' imported from /x/dist/eval/external-graph.js"))).toBe(
      "tsx",
    );
    expect(missingPackageOf(notFound("Cannot find package '@huggingface/transformers' imported from /x/y.js"))).toBe(
      "@huggingface/transformers",
    );
    expect(
      missingPackageOf(notFound("Cannot find module 'onnxruntime-node/dist/index.js' imported from /x/y.js")),
    ).toBe("onnxruntime-node");
    expect(
      missingPackageOf(
        notFound("Cannot find module '/x/node_modules/tsx/dist/esm/api/index.mjs' imported from /x/y.js"),
      ),
    ).toBe("/x/node_modules/tsx/dist/esm/api/index.mjs");
    expect(
      missingPackageOf(Object.assign(new Error("Cannot find module 'esbuild'"), { code: "MODULE_NOT_FOUND" })),
    ).toBe("esbuild");
    expect(missingPackageOf(new Error("Cannot find package 'tsx'"))).toBeNull(); // no code: not the loader's error
    expect(missingPackageOf(new SyntaxError("Unexpected token"))).toBeNull();
    expect(missingPackageOf(undefined)).toBeNull();
  });

  it("missingPeerError: exit 2 with the install command; a missing dependency of the peer is named; other errors are not mapped", () => {
    const e = missingPeerError(
      "tsx",
      "--graph a.ts is TypeScript and needs",
      notFound("Cannot find package 'tsx' imported from /x.js"),
    );
    expect(MissingPeerError.isInstance(e)).toBe(true);
    expect(e?.exitCode).toBe(2);
    expect(e?.install).toBe("npm install -D tsx");
    expect(e?.message).toBe(
      "--graph a.ts is TypeScript and needs the optional peer tsx (^4.20.0), which is not installed: run `npm install -D tsx`",
    );
    const broken = missingPeerError(
      "tsx",
      "x needs",
      notFound("Cannot find package 'esbuild' imported from /n/tsx/dist/x.mjs"),
      "or y",
    );
    expect(broken?.message).toBe(
      "x needs the optional peer tsx (^4.20.0), which cannot be loaded (esbuild is missing): run `npm install -D tsx`, or y",
    );
    expect(missingPeerError("tsx", "x needs", new TypeError("boom"))).toBeNull();
  });
});
