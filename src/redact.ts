/**
 * Credentials never leak (docs/reliability.md): the one place that knows
 * which strings of the environment are secret, used by every output path
 * (logs, CLI errors, URLs in reports).
 */

/** `url` with any `user:password@` shown as `***@` (and no trailing slash); unparsable text is returned as `<invalid URL>`. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    const auth = u.username !== "" || u.password !== "" ? "***@" : "";
    return `${u.protocol}//${auth}${u.host}${u.pathname === "/" ? "" : u.pathname}`;
  } catch {
    return "<invalid URL>";
  }
}

/** The secrets of this environment: token values and any password/user in CHROMA_URL (non-empty ones). */
export function secretsOf(env: NodeJS.ProcessEnv = process.env): string[] {
  const out = [env.CHROMA_API_KEY, env.CHROMA_AUTH_TOKEN];
  try {
    const u = new URL(env.CHROMA_URL ?? "");
    out.push(decodeURIComponent(u.password), u.password);
    if (u.password !== "") out.push(`${u.username}:${u.password}`);
  } catch {
    // no URL, no secret in it
  }
  return [...new Set(out.filter((s): s is string => s !== undefined && s.length >= 3))];
}

/** `text` with every secret of `env` replaced by `***`. */
export function redactSecrets(text: string, env: NodeJS.ProcessEnv = process.env): string {
  let t = text;
  for (const s of secretsOf(env)) t = t.split(s).join("***");
  return t;
}

