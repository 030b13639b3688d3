/**
 * The value of a floor check (`--gate min-hit=VALUE` on `retrace eval`,
 * `retrace start` and `retrace merge`; one per floor of the metric registry,
 * FLOOR_OPTIONS): `X` or `SCOPE=X,...`.
 */
import { InvalidArgumentError as CommanderArgumentError } from "commander";
import { FIXED_SCOPES, type ScopedFloors } from "../eval/gate/gate.js";
import { parseNumberIn } from "./options.js";

type Floors = number | ScopedFloors;

/**
 * `0.9` (scope all), `en=0.95,es-419=0.9,adversarial=0.8`, or both mixed
 * (`0.9,en=0.95`): floors per scope, each in [0, 1]. Scope names are checked
 * against the run before it starts (planEval).
 */
export function parseFloors(flag: string): (raw: string) => Floors {
  const bad = (msg: string) => new CommanderArgumentError(`${flag}: ${msg}`);
  return (raw: string): Floors => {
    const items = raw.split(",").map((x) => x.trim());
    const out: Record<string, number> = {};
    for (const item of items) {
      const m = /^(?:([A-Za-z][A-Za-z0-9-]*)=)?(.+)$/.exec(item);
      const scope = m?.[1] ?? "all";
      const x = m === null ? undefined : parseNumberIn(m[2] as string, { min: 0, max: 1 });
      if (x === undefined)
        throw bad(
          `expected a floor between 0 and 1 or SCOPE=FLOOR items (scopes ${FIXED_SCOPES.join(", ")} or a locale), got ${JSON.stringify(item)}`,
        );
      if (scope in out) throw bad(`scope ${scope} given twice`);
      out[scope] = x;
    }
    const keys = Object.keys(out);
    return keys.length === 1 && keys[0] === "all" ? (out.all as number) : out;
  };
}
