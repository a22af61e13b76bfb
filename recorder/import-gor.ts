/**
 * Corpus import from GoReplay `.gor` files: payloads separated by the line
 * "🐵🙈🙉", each starting with a meta line `TYPE ID TIMESTAMP_NS [LATENCY]`
 * then the raw HTTP message. Type 1 (requests) is imported; responses (2, 3)
 * are counted as ignored; a malformed payload is skipped and reported by the
 * line it starts on.
 */
import type { CorpusRecord } from '../core/index.js';
import { buildRecord } from './record-builder.js';
import type { Redactor } from './redact.js';
import { importProblem } from './import-checks.js';
import type { ParsedImport, SkippedInput } from './import-har.js';

export const GOR_SEPARATOR = '\n🐵🙈🙉\n';
const SEPARATOR_BYTES = Buffer.from(GOR_SEPARATOR);
const CRLF2 = Buffer.from('\r\n\r\n');
const LF2 = Buffer.from('\n\n');

/** Split on the separator, keeping each payload's first line number. */
function payloads(data: Buffer): { bytes: Buffer; line: number }[] {
  const out: { bytes: Buffer; line: number }[] = [];
  let start = 0;
  let line = 1;
  while (start <= data.length) {
    const next = data.indexOf(SEPARATOR_BYTES, start);
    const end = next < 0 ? data.length : next;
    const bytes = data.subarray(start, end);
    if (bytes.length > 0 && bytes.toString('utf8').trim() !== '') out.push({ bytes, line });
    for (let i = start; i < end; i++) if (data[i] === 0x0a) line++;
    if (next < 0) break;
    line += 2; // the newline before the separator line and the one after it
    start = next + SEPARATOR_BYTES.length;
  }
  return out;
}

export function parseGor(data: Buffer, options: { tier: string; redactor: Redactor; maxBodyBytes: number }): ParsedImport & { ignoredResponses: number } {
  const records: CorpusRecord[] = [];
  const skipped: SkippedInput[] = [];
  let ignoredResponses = 0;
  for (const { bytes, line } of payloads(data)) {
    const where = `line ${line}`;
    const metaEnd = bytes.indexOf(0x0a);
    if (metaEnd < 0) {
      skipped.push({ where, reason: 'payload has no meta line' });
      continue;
    }
    const meta = bytes.subarray(0, metaEnd).toString('utf8').trim().split(/\s+/);
    if (meta.length < 3 || !/^[123]$/.test(meta[0]!) || !/^\d+$/.test(meta[2]!)) {
      skipped.push({ where, reason: `meta line "${meta.join(' ').slice(0, 60)}" is not "TYPE ID TIMESTAMP_NS"` });
      continue;
    }
    if (meta[0] !== '1') {
      ignoredResponses++;
      continue;
    }
    const message = bytes.subarray(metaEnd + 1);
    let headEnd = message.indexOf(CRLF2);
    let separatorLength = 4;
    if (headEnd < 0) {
      headEnd = message.indexOf(LF2);
      separatorLength = 2;
    }
    const head = (headEnd < 0 ? message : message.subarray(0, headEnd)).toString('latin1').split(/\r?\n/);
    const requestLine = /^([A-Za-z]+) (\S+) HTTP\/\d(\.\d)?$/.exec(head[0] ?? '');
    if (!requestLine) {
      skipped.push({ where, reason: `request line "${(head[0] ?? '').slice(0, 60)}" is not "METHOD PATH HTTP/x.y"` });
      continue;
    }
    const headers: Record<string, string> = {};
    let bad: string | undefined;
    for (const headerLine of head.slice(1)) {
      const colon = headerLine.indexOf(':');
      if (colon <= 0) {
        bad = `header line "${headerLine.slice(0, 60)}" has no name`;
        break;
      }
      const name = headerLine.slice(0, colon).trim().toLowerCase();
      const value = headerLine.slice(colon + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
    if (bad) {
      skipped.push({ where, reason: bad });
      continue;
    }
    const body = headEnd < 0 ? Buffer.alloc(0) : Buffer.from(message.subarray(headEnd + separatorLength));
    const target = requestLine[2]!;
    const path = target.startsWith('/')
      ? target
      : (() => {
          try {
            const url = new URL(target);
            return `${url.pathname}${url.search}`;
          } catch {
            return undefined;
          }
        })();
    if (path === undefined) {
      skipped.push({ where, reason: `request target "${target.slice(0, 60)}" is neither a path nor a URL` });
      continue;
    }
    const timeMs = Math.floor(Number(BigInt(meta[2]!) / 1_000_000n));
    const problem = importProblem({ timeMs, method: requestLine[1]!, headers });
    if (problem !== undefined) {
      skipped.push({ where, reason: problem });
      continue;
    }
    records.push(
      buildRecord(
        options.tier,
        options.redactor,
        { timeMs, method: requestLine[1]!, url: path, headers, body, truncated: body.length > options.maxBodyBytes },
        { rate: 1, mode: 'import' },
      ),
    );
  }
  return { records, skipped, ignoredResponses };
}

/** Render records as a .gor file (for round-trip tests and for handing a corpus to GoReplay). */
export function formatGor(records: readonly CorpusRecord[]): Buffer {
  const parts = records.map((record, i) => {
    const head = [`${record.method} ${record.path} HTTP/1.1`, ...Object.entries(record.headers).map(([name, value]) => `${name}: ${value}`)].join('\r\n');
    return Buffer.concat([
      Buffer.from(`1 ${i.toString(16).padStart(24, '0')} ${BigInt(record.timeMs) * 1_000_000n}\n${head}\r\n\r\n`),
      Buffer.from(record.body, 'base64'),
    ]);
  });
  const out: Buffer[] = [];
  parts.forEach((part, i) => {
    if (i > 0) out.push(SEPARATOR_BYTES);
    out.push(part);
  });
  return Buffer.concat(out);
}
