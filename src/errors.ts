/**
 * Every error class of retrace. Each carries a `code` from a closed union and,
 * where it applies, the offending value. The CLI maps `exitCode` to the
 * process exit code (DESIGN.md §5): 2 bad usage or invalid data, 3 a required
 * service or model is unavailable.
 */

export type RetraceErrorCode =
  | "INVALID_DATA"
  | "INVALID_ARGUMENT"
  | "SERVICE_UNAVAILABLE"
  | "MODEL_UNAVAILABLE"
  | "DIMENSION_MISMATCH"
  | "BASELINE_MISMATCH"
  | "NOT_MEASURED"
  | "INVALID_GRAPH";

export abstract class RetraceError extends Error {
  abstract readonly code: RetraceErrorCode;
  abstract readonly exitCode: 2 | 3;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** One problem found in an input file: where it is and what was expected. */
export interface DataIssue {
  file: string;
  /** 1-based line number (JSONL and front matter); absent when the whole file is at fault. */
  line?: number;
  /** Dotted path of the offending field, e.g. `turns[1].must_cite_one_of[0]`. */
  field?: string;
  message: string;
}

export function formatIssue(issue: DataIssue): string {
  const where = issue.line !== undefined ? `${issue.file}:${issue.line}` : issue.file;
  const field = issue.field !== undefined ? ` field \`${issue.field}\`` : "";
  return `${where}:${field} ${issue.message}`;
}

/** Invalid knowledge-base cards, eval cases, qrels, run files, reports or baselines. */
export class DataValidationError extends RetraceError {
  readonly code = "INVALID_DATA" as const;
  readonly exitCode = 2 as const;
  readonly issues: DataIssue[];
  constructor(issues: DataIssue[]) {
    const head = issues.slice(0, 20).map(formatIssue).join("\n");
    const more = issues.length > 20 ? `\n... and ${issues.length - 20} more` : "";
    super(`${issues.length} data error${issues.length === 1 ? "" : "s"}:\n${head}${more}`);
    this.issues = issues;
  }
}

/** A bad option or argument: `Expected \`k\` to be a positive integer, got 0`. */
export class InvalidArgumentError extends RetraceError {
  readonly code = "INVALID_ARGUMENT" as const;
  readonly exitCode = 2 as const;
  constructor(
    readonly argument: string,
    readonly expected: string,
    readonly value: unknown,
  ) {
    super(`Expected \`${argument}\` to be ${expected}, got ${JSON.stringify(value) ?? String(value)}`);
  }
}

/** A required service (Chroma) cannot be reached or started. */
export class ServiceUnavailableError extends RetraceError {
  readonly code = "SERVICE_UNAVAILABLE" as const;
  readonly exitCode = 3 as const;
  constructor(
    readonly service: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A model's weights are not available locally (and downloads are not allowed). */
export class ModelUnavailableError extends RetraceError {
  readonly code = "MODEL_UNAVAILABLE" as const;
  readonly exitCode = 3 as const;
  constructor(
    readonly model: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Vectors whose dimension does not match the collection or the embedder. */
export class DimensionMismatchError extends RetraceError {
  readonly code = "DIMENSION_MISMATCH" as const;
  readonly exitCode = 2 as const;
  constructor(
    readonly expected: number,
    readonly actual: number,
    context: string,
  ) {
    super(`Expected embeddings of dimension ${expected} for ${context}, got ${actual}`);
  }
}

/** A baseline that cannot be compared with this run (other dataset, other k, other config). */
export class BaselineMismatchError extends RetraceError {
  readonly code = "BASELINE_MISMATCH" as const;
  readonly exitCode = 2 as const;
  constructor(
    readonly field: string,
    readonly baselineValue: unknown,
    readonly runValue: unknown,
  ) {
    super(
      `Cannot compare with the baseline: its \`${field}\` is ${JSON.stringify(baselineValue)} but this run's is ${JSON.stringify(runValue)}; re-create the baseline with --update-baseline`,
    );
  }
}

/** A floor or baseline comparison requested on a metric that this run did not measure. */
export class NotMeasuredError extends RetraceError {
  readonly code = "NOT_MEASURED" as const;
  readonly exitCode = 2 as const;
  constructor(
    readonly key: string,
    reason: string,
  ) {
    super(`\`${key}\` was not measured (${reason}); a floor or baseline on it cannot pass`);
  }
}

/**
 * A user graph that cannot be evaluated (docs/evaluate-your-graph.md): its
 * file or export is missing, it is not a compiled graph or factory, building
 * it threw, or its retrievers return documents with no card id.
 */
export class GraphInputError extends RetraceError {
  readonly code = "INVALID_GRAPH" as const;
  readonly exitCode = 2 as const;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

export function isRetraceError(e: unknown): e is RetraceError {
  return e instanceof RetraceError;
}
