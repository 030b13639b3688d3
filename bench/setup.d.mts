/** What a bench file (a name in bench/) needs before it runs (bench/setup.mjs). */
export function needsOf(file: string): { sqlite: boolean; model: boolean };
/** Installs or fetches what the given bench files need; false when a needed install failed. */
export function prepareBenches(files: readonly string[]): boolean;
