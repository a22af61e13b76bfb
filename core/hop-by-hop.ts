/** RFC 9110 §7.6.1: connection-specific headers a proxy must not forward. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade']);

/** Headers to pass on, without hop-by-hop ones and those the Connection header names (and `alsoDrop`, and any name starting with `dropPrefix`). */
export function withoutHopByHop(raw: Readonly<Record<string, string | string[] | undefined>>, alsoDrop?: string, dropPrefix?: string): Record<string, string | string[]> {
  // Runs once per proxied request: no `delete` (it would turn the object into a slow dictionary).
  const connection = raw.connection;
  const listed = typeof connection === 'string' && connection.includes(',') ? connection.toLowerCase().split(',').map((h) => h.trim()) : typeof connection === 'string' ? [connection.toLowerCase().trim()] : undefined;
  const out: Record<string, string | string[]> = {};
  for (const name in raw) {
    const value = raw[name];
    if (value === undefined || name === alsoDrop || HOP_BY_HOP.has(name) || (listed !== undefined && listed.includes(name)) || (dropPrefix !== undefined && name.startsWith(dropPrefix))) continue;
    out[name] = value;
  }
  return out;
}
