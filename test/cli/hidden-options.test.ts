/**
 * One table of retired spellings and no other hidden options (issue 50,
 * item 2): every option a command registers but does not show in its help is
 * a row of RETIRED (src/cli/old-spellings.ts) naming that command, and every
 * row of RETIRED is registered on each command it names. Wave five left 116
 * hidden options registered by ten separate `hidden()` calls (parsers and
 * defaults of settings among them); each is now a row of the table.
 */
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/main.js";
import { RETIRED } from "../../src/cli/old-spellings.js";

/** Every command (moved ones aside), each registered once (`eval` registers `start` too). */
async function allCommands(): Promise<Command> {
  const program = new Command("retrace");
  for (const [name, { load, moved }] of Object.entries(COMMANDS))
    if (moved !== true && !program.commands.some((c) => c.name() === name)) (await load()).register(program);
  return program;
}

/** `name: --flag` of every hidden option under `cmd`. */
function hiddenOptions(cmd: Command, prefix = ""): string[] {
  return cmd.commands.flatMap((sub) => {
    const name = `${prefix}${sub.name()}`;
    return [
      ...sub.options.filter((o) => o.hidden).map((o) => `${name}: ${o.long ?? o.flags}`),
      ...hiddenOptions(sub, `${name} `),
    ];
  });
}

describe("hidden options", () => {
  it("are exactly the retired spellings of RETIRED, on the commands each row names", async () => {
    const hidden = hiddenOptions(await allCommands()).sort();
    const table = RETIRED.flatMap((r) => r.commands.map((c) => `${c}: ${r.flags.split(" ")[0]}`)).sort();
    expect(hidden).toEqual(table);
    // every retired spelling names where to go (a config key, --gate, --out, or an explanation)
    for (const r of RETIRED)
      expect(r.to).toMatch(/^(retrieval|run)\.\w+$|^--(gate|out|github|counterfactual) |^nothing: /);
  });

  it("no command shows a retired spelling in its help, and no retired spelling is also a visible option", async () => {
    const program = await allCommands();
    for (const cmd of program.commands) {
      const visible = new Set(cmd.options.filter((o) => !o.hidden).map((o) => o.long));
      for (const r of RETIRED.filter((x) => (x.commands as readonly string[]).includes(cmd.name())))
        expect(visible.has(r.flags.split(" ")[0]), `${cmd.name()} ${r.flags}`).toBe(false);
    }
  });
});
