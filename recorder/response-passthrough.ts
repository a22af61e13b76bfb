/**
 * How the sidecar hands an upstream's response to its client unchanged: the
 * reason phrase, header order and repeated headers as sent (a flat raw list,
 * not an object that would merge or reorder them), informational responses
 * (102, 103 Early Hints) before the final one, and trailers after the body.
 * Only what belongs to one connection is dropped (hop-by-hop headers and those
 * the `Connection` header names); `Trailer` stays, since trailers are passed on.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { CONNECTION_HEADERS } from '../net/index.js';

const PER_CONNECTION = new Set([...CONNECTION_HEADERS, 'te']);

type RawHeaders = readonly (Buffer | string | readonly (Buffer | string)[])[];

/** [name, value, name, value, …] as latin1 text (header bytes are latin1 on the wire). */
export function rawHeaderList(raw: RawHeaders): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const value = raw[i + 1]!;
    const name = raw[i]!.toString();
    for (const one of Array.isArray(value) ? value : [value]) out.push(name, (one as Buffer | string).toString('latin1'));
  }
  return out;
}

/**
 * The raw list less what belongs to one connection. `allowTrailer` is false when
 * the client's response cannot be chunked (an HTTP/1.0 client, or a length the
 * upstream fixed): Node refuses a `Trailer` header there, and no trailer can follow.
 */
export function endToEndHeaders(list: readonly string[], allowTrailer = true): string[] {
  let named: string[] | undefined;
  for (let i = 0; i < list.length; i += 2)
    if (list[i]!.toLowerCase() === 'connection')
      (named ??= []).push(
        ...list[i + 1]!.toLowerCase()
          .split(',')
          .map((h) => h.trim()),
      );
  const out: string[] = [];
  for (let i = 0; i < list.length; i += 2) {
    const name = list[i]!.toLowerCase();
    if (PER_CONNECTION.has(name) || named?.includes(name) || (!allowTrailer && name === 'trailer')) continue;
    out.push(list[i]!, list[i + 1]!);
  }
  return out;
}

function hasLength(list: readonly string[]): boolean {
  for (let i = 0; i < list.length; i += 2) if (list[i]!.toLowerCase() === 'content-length') return true;
  return false;
}

/** A final response's head, written to the client. */
export function writeFinalHead(
  req: IncomingMessage,
  res: ServerResponse,
  statusCode: number,
  statusMessage: string | undefined,
  list: readonly string[],
): void {
  const chunkable = req.httpVersion === '1.1' && !hasLength(list);
  res.writeHead(statusCode, statusMessage ?? '', endToEndHeaders(list, chunkable));
}

/** Trailers, as pairs for `addTrailers` (Node writes them only on a chunked response, which is the only one that can carry them). */
export function trailerPairs(list: readonly string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < list.length; i += 2) out.push([list[i]!, list[i + 1]!]);
  return out;
}

/**
 * An informational (1xx) response, written ahead of the final one. Node offers
 * `writeEarlyHints` (103 with a validated `Link` only) and `writeProcessing`
 * (102, no headers); neither passes an arbitrary 1xx as sent, so this writes the
 * head the way both of them do, through the response's raw writer, which queues
 * it in order when the response is not yet at the head of a pipelined connection.
 */
export function writeInformational(res: ServerResponse, statusCode: number, statusMessage: string | undefined, list: readonly string[]): void {
  const writeRaw = (res as unknown as { _writeRaw?: (data: string, encoding: BufferEncoding) => boolean })._writeRaw;
  if (typeof writeRaw !== 'function' || res.headersSent || res.destroyed) return;
  let head = `HTTP/1.1 ${statusCode} ${statusMessage ?? ''}\r\n`;
  const kept = endToEndHeaders(list);
  for (let i = 0; i < kept.length; i += 2) head += `${kept[i]!}: ${kept[i + 1]!}\r\n`;
  writeRaw.call(res, `${head}\r\n`, 'latin1');
}

/**
 * One proxied exchange as an undici dispatch handler: the response is written
 * straight into the client's `ServerResponse` with backpressure (no stream in
 * between, which cost throughput), its 1xx responses and trailers included.
 * A client that leaves aborts the upstream request.
 */
export class ResponsePassthrough implements Dispatcher.DispatchHandler {
  #abort: ((error?: Error) => void) | undefined;
  #resume: (() => void) | undefined;
  #settled = false;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly onFailure: (error: unknown) => void,
  ) {
    res.once('close', this.#clientClosed);
  }

  readonly #clientClosed = (): void => {
    if (!this.#settled) this.#abort?.(new Error('the client closed its connection'));
  };

  readonly #drained = (): void => this.#resume?.();

  onConnect(abort: (error?: Error) => void): void {
    this.#abort = abort;
    if (this.res.destroyed) abort(new Error('the client closed its connection'));
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean {
    const list = rawHeaderList(rawHeaders);
    if (statusCode < 200) {
      writeInformational(this.res, statusCode, statusText, list);
      return true;
    }
    this.#resume = resume;
    writeFinalHead(this.req, this.res, statusCode, statusText, list);
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.res.destroyed) return false;
    const more = this.res.write(chunk);
    if (!more) this.res.once('drain', this.#drained);
    return more;
  }

  onComplete(rawTrailers: Buffer[] | string[] | null): void {
    this.#settled = true;
    if (rawTrailers && rawTrailers.length > 0) this.res.addTrailers(trailerPairs(rawHeaderList(rawTrailers)));
    this.res.end();
  }

  onError(error: Error): void {
    this.#settled = true;
    this.onFailure(error);
  }
}
