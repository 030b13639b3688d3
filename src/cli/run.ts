/** Process entry point of the `retrace` command (bin/retrace.mjs and `npm start` load this file). */
import { main } from "./main.js";

await main();
