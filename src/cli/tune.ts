/** `retrace tune` and `retrace beir --tune` (docs/fusion-and-tuning.md). */
import { InvalidArgumentError } from "../errors.js";
import type { BeirDataset } from "../eval/beir.js";
import type { RetrievalConfig } from "../eval/tune-config.js";
import type { BeirOptions } from "./beir.js";

export async function beirTune(_data: BeirDataset, _o: BeirOptions, _base: RetrievalConfig): Promise<number> {
  throw new InvalidArgumentError("--tune", "not available yet", true);
}
