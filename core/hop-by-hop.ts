/** RFC 9110 §7.6.1: connection-specific headers a proxy must not forward. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade']);

/** Headers to pass on, without hop-by-hop ones and those the Connection header names. */
export function withoutHopByHop(raw: Readonly<Record<string, string | string[] | undefined>>): Record<string, string | string[]> {
  const listed = typeof raw.connection === 'string' ? raw.connection.toLowerCase().split(',').map((h) => h.trim()) : [];
  const out: Record<string, string | string[]> = {};
  for (const name in raw) {
    const value = raw[name];
    if (value === undefined || HOP_BY_HOP.has(name) || listed.includes(name)) continue;
    out[name] = value;
  }
  return out;
}
