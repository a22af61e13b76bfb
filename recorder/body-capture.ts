import type { IncomingMessage } from 'node:http';

/** Collects a request body while it streams past, up to a limit; beyond it only notes the truncation. */
export class BodyCapture {
  readonly #chunks: Buffer[] = [];
  #size = 0;
  #truncated = false;

  constructor(readonly limit: number) {}

  add(chunk: Buffer | string): void {
    if (this.#truncated) return;
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    this.#size += buffer.length;
    if (this.#size > this.limit) {
      this.#truncated = true;
      this.#chunks.length = 0;
      return;
    }
    this.#chunks.push(buffer);
  }

  get truncated(): boolean {
    return this.#truncated;
  }

  /** The body so far (empty once truncated). */
  body(): Buffer {
    if (this.#truncated) return Buffer.alloc(0);
    // Most bodies arrive in one chunk: no copy then.
    return this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks, this.#size);
  }
}

/**
 * Watch a request's body as its reader consumes it: 'data' and 'end' (or a
 * 'close' before the end) are seen as they are emitted, whatever way the
 * reader reads ('data' events, async iteration, read()). Nothing is attached
 * as a listener, so the stream's flow is the reader's alone — a 'data'
 * listener of ours would start it flowing before the reader is ready and lose
 * the first chunks.
 */
export function watchBody(req: IncomingMessage, limit: number, on: { readonly end: (capture: BodyCapture) => void; readonly close?: (capture: BodyCapture) => void }): BodyCapture {
  const capture = new BodyCapture(limit);
  let settled = false;
  const emit = req.emit;
  req.emit = function (this: IncomingMessage, event: string | symbol, chunk?: unknown): boolean {
    if (event === 'data') capture.add(chunk as Buffer);
    else if ((event === 'end' || event === 'close') && !settled) {
      settled = true;
      if (event === 'end') on.end(capture);
      else on.close?.(capture);
    }
    // `arguments`, not a rest parameter: no array allocated per event on every recorded request.
    // eslint-disable-next-line prefer-rest-params
    return Reflect.apply(emit, this, arguments);
  } as typeof req.emit;
  return capture;
}
