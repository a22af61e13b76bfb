/**
 * The fields that belong to one connection (RFC 9110 §7.6.1; RFC 9113 §8.2.2 makes them malformed in HTTP/2): no
 * proxy of Tandem's passes them on, whichever protocol it speaks. The one list: every other set here is built on it.
 */
export const CONNECTION_HEADERS: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
]);

/** Hop-by-hop for an HTTP/1.1 proxy: the connection's fields, `te` and `trailer` (each hop says them anew). */
export const HOP_BY_HOP_HEADERS: ReadonlySet<string> = new Set([...CONNECTION_HEADERS, 'te', 'trailer']);
const HOP_BY_HOP = HOP_BY_HOP_HEADERS;

/** Headers to pass on, without hop-by-hop ones and those the Connection header names (and `alsoDrop`, and any name starting with `dropPrefix`). */
export function withoutHopByHop(
  raw: Readonly<Record<string, string | string[] | undefined>>,
  alsoDrop?: string,
  dropPrefix?: string,
): Record<string, string | string[]> {
  // Runs once per proxied request: no `delete` (it would turn the object into a slow dictionary).
  const connection = raw.connection;
  const listed =
    typeof connection === 'string' && connection.includes(',')
      ? connection
          .toLowerCase()
          .split(',')
          .map((h) => h.trim())
      : typeof connection === 'string'
        ? [connection.toLowerCase().trim()]
        : undefined;
  const out: Record<string, string | string[]> = {};
  for (const name in raw) {
    const value = raw[name];
    if (
      value === undefined ||
      name === alsoDrop ||
      HOP_BY_HOP.has(name) ||
      (listed !== undefined && listed.includes(name)) ||
      (dropPrefix !== undefined && name.startsWith(dropPrefix))
    )
      continue;
    out[name] = value;
  }
  return out;
}
