import type { IncomingMessage } from 'node:http';
import { BodyCopy } from '../net/index.js';

/** A request body collected while it streams past, up to a limit (net/body-copy.ts); beyond it only its truncation. */
export type BodyCapture = BodyCopy;

/**
 * Watch a request's body as its reader consumes it: 'data' and 'end' (or a
 * 'close' before the end) are seen as they are emitted, whatever way the
 * reader reads ('data' events, async iteration, read()). Nothing is attached
 * as a listener, so the stream's flow is the reader's alone — a 'data'
 * listener of ours would start it flowing before the reader is ready and lose
 * the first chunks.
 */
export function watchBody(
  req: IncomingMessage,
  limit: number,
  on: { readonly end: (capture: BodyCapture) => void; readonly close?: (capture: BodyCapture) => void },
): BodyCapture {
  const capture = new BodyCopy(limit);
  let settled = false;
  const emit = req.emit;
  req.emit = function (this: IncomingMessage, event: string | symbol, chunk?: unknown): boolean {
    if (event === 'data') capture.add(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
    else if ((event === 'end' || event === 'close') && !settled) {
      settled = true;
      if (event === 'end') on.end(capture);
      else on.close?.(capture);
      // What the record needs it has copied by now (Recorder.record posts the bytes to its worker).
      capture.release();
    }
    // `arguments`, not a rest parameter: no array allocated per event on every recorded request.
    // eslint-disable-next-line prefer-rest-params
    return Reflect.apply(emit, this, arguments);
  } as typeof req.emit;
  return capture;
}
