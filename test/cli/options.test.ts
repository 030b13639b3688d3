/** The one family of numeric option parsers (src/cli/options.ts): the error echoes the text typed and the true range. */
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import {
  checkIntRange,
  commandsTaking,
  countOption,
  intListOption,
  intOption,
  MAX_SEED,
  numberOption,
  parseIntIn,
  parseNumberIn,
  positiveIntOption,
  positiveNumberOption,
  probabilityOption,
  rangeText,
  refuseInMode,
  seedOption,
  unknownOptionOf,
} from "../../src/cli/options.js";

/** The message a parser throws for `raw` (it must throw). */
const messageOf = (parse: (raw: string) => unknown, raw: string): string => {
  try {
    parse(raw);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error(`expected ${JSON.stringify(raw)} to be rejected`);
};

describe("rangeText", () => {
  it("states both bounds, one bound, or the familiar words for ≥ 1 and ≥ 0", () => {
    expect(rangeText("integer", { min: 0, max: 12, note: "the case has 13 turns" })).toBe(
      "an integer from 0 to 12 (the case has 13 turns)",
    );
    expect(rangeText("integer", { min: 2 })).toBe("an integer ≥ 2");
    expect(rangeText("integer", { min: 1 })).toBe("a positive integer");
    expect(rangeText("integer", { min: 0 })).toBe("a non-negative integer");
    expect(rangeText("number", { min: 0, max: 1 })).toBe("a number from 0 to 1");
    expect(rangeText("number", { min: 0, minExclusive: true, unit: "seconds" })).toBe("a number > 0 (seconds)");
    expect(rangeText("number", { min: 0, minExclusive: true, max: 1 })).toBe("a number > 0 and ≤ 1");
    expect(rangeText("number")).toBe("a finite number");
  });
});

describe("parseIntIn / parseNumberIn", () => {
  it("accept only what they spell: decimal digits for integers, decimal notation for numbers", () => {
    expect(parseIntIn("0", { min: 0 })).toBe(0);
    expect(parseIntIn(" 7 ")).toBe(7);
    expect(parseIntIn("-3", { min: 0 })).toBeUndefined();
    for (const bad of ["", "abc", "1.0", "1e3", "0x10", "NaN", "Infinity", "9007199254740993"])
      expect(parseIntIn(bad)).toBeUndefined();
    expect(parseNumberIn(".5", { min: 0, max: 1 })).toBe(0.5);
    expect(parseNumberIn("1e-3")).toBe(0.001);
    for (const bad of ["", "abc", "0x1", "Infinity", "1,5", "."]) expect(parseNumberIn(bad)).toBeUndefined();
    expect(parseNumberIn("0", { min: 0, minExclusive: true })).toBeUndefined();
    expect(parseNumberIn("1.0000001", { min: 0, max: 1 })).toBeUndefined();
  });
});

describe("the option parsers", () => {
  it("echo the raw text given (never a transformed value) with the true range", () => {
    expect(messageOf(intOption("--turn", { min: 0, max: 12, note: "the case has 13 turns" }), "-3")).toBe(
      'Expected `--turn` to be an integer from 0 to 12 (the case has 13 turns), got "-3"',
    );
    expect(messageOf(intOption("--turn", { min: 0, max: 12 }), "abc")).toBe(
      'Expected `--turn` to be an integer from 0 to 12, got "abc"',
    );
    expect(messageOf(positiveIntOption("--top"), "0")).toBe('Expected `--top` to be a positive integer, got "0"');
    expect(messageOf(countOption("--max-flips"), "-1")).toBe(
      'Expected `--max-flips` to be a non-negative integer, got "-1"',
    );
    expect(messageOf(probabilityOption("--max-drop"), "1.5")).toBe(
      'Expected `--max-drop` to be a number from 0 to 1, got "1.5"',
    );
    expect(messageOf(positiveNumberOption("--timeout", "seconds"), "0")).toBe(
      'Expected `--timeout` to be a number > 0 (seconds), got "0"',
    );
    expect(messageOf(seedOption(), "4294967296")).toBe(
      'Expected `--seed` to be an integer from 0 to 4294967295, got "4294967296"',
    );
    expect(messageOf(numberOption("--step", { min: 0, minExclusive: true, max: 1 }), "0")).toBe(
      'Expected `--step` to be a number > 0 and ≤ 1, got "0"',
    );
  });

  it("return the value when it is in range (bounds inclusive)", () => {
    expect(intOption("--turn", { min: 0, max: 12 })("12")).toBe(12);
    expect(seedOption()("0")).toBe(0);
    expect(seedOption()(String(MAX_SEED))).toBe(MAX_SEED);
    expect(probabilityOption("--max-drop")("1")).toBe(1);
    expect(positiveNumberOption("--timeout", "seconds")("0.25")).toBe(0.25);
  });

  it("intListOption names the whole value and the item range", () => {
    expect(intListOption("-k", { min: 1 })("5, 10")).toEqual([5, 10]);
    expect(messageOf(intListOption("-k", { min: 1 }), "5,0")).toBe(
      'Expected `-k` to be a comma-separated list of positive integers, got "5,0"',
    );
    expect(messageOf(intListOption("-k", { min: 1, max: 100 }), "5,x")).toBe(
      'Expected `-k` to be a comma-separated list of integers from 1 to 100, got "5,x"',
    );
  });

  it("throw commander's InvalidArgumentError (a usage error, exit 2) from parsers, retrace's from checkIntRange", () => {
    expect(() => positiveIntOption("--top")("0")).toThrow(
      expect.objectContaining({ code: "commander.invalidArgument" }),
    );
    expect(() => checkIntRange("--turn", 13, { min: 0, max: 12 }, "13")).toThrow(
      expect.objectContaining({ code: "INVALID_ARGUMENT", exitCode: 2 }),
    );
    expect(checkIntRange("--turn", 12, { min: 0, max: 12 })).toBe(12);
  });
});

describe("unknown options and unused ones", () => {
  it("unknownOptionOf reads commander's message, a --flag=value reduced to the flag", () => {
    expect(unknownOptionOf("error: unknown option '--junit'")).toBe("--junit");
    expect(unknownOptionOf("error: unknown option '--junit=x.xml'")).toBe("--junit");
    expect(unknownOptionOf("error: missing required argument 'x'")).toBeNull();
  });

  it("commandsTaking walks subcommands and matches long and short flags", () => {
    const p = new Command("p");
    p.command("a").option("--junit <f>").option("-q, --quiet");
    p.command("b").option("--json");
    p.command("c").command("d").option("--junit <f>");
    expect(commandsTaking(p, "--junit")).toEqual(["a", "c d"]);
    expect(commandsTaking(p, "-q")).toEqual(["a"]);
    expect(commandsTaking(p, "--nope")).toEqual([]);
  });

  it("refuseInMode rejects an option given on the command line in a mode that does not use it, never a default", async () => {
    const run = async (args: string[]) => {
      const p = new Command("p").exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
      let ran = false;
      const cmd = p
        .command("e")
        .option("--graph <f>")
        .option("--rerank <m>")
        .option("--depth <n>", "d", "5")
        .action(() => {
          ran = true;
        });
      refuseInMode<{ graph?: string }>(cmd, [
        { when: (o) => o.graph !== undefined, mode: "with --graph", unused: ["--rerank", "--depth"] },
      ]);
      try {
        await p.parseAsync(["node", "p", "e", ...args]);
        return { ran, error: null };
      } catch (e) {
        return { ran, error: e as { code: string; exitCode: number; message: string } };
      }
    };
    expect(await run(["--graph", "g", "--rerank", "x"])).toMatchObject({
      ran: false,
      error: {
        exitCode: 2,
        code: "retrace.unusedOption",
        message: "error: option '--rerank' is not used with --graph",
      },
    });
    expect(await run(["--graph", "g"])).toEqual({ ran: true, error: null }); // --depth's default is not "given"
    expect(await run(["--rerank", "x"])).toEqual({ ran: true, error: null });
  });
});
