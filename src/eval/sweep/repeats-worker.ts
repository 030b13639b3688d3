/** The worker thread of `repeatsSectionOffThread` (./repeats-thread.ts): the section of the turns it is sent. */
import { workerData } from "node:worker_threads";
import { serveJob } from "../../thread-job.js";
import type { TurnReport } from "../report/types.js";
import { repeatsSection } from "./repeats.js";
import type { RepeatTurn, SectionOptions } from "./repeats-thread.js";

serveJob<RepeatTurn, ReturnType<typeof repeatsSection>>((turns) =>
  repeatsSection(turns as TurnReport[], workerData as SectionOptions),
);
