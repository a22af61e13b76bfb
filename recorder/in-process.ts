/**
 * Recording inside a Node service, without a sidecar: a wrapper for a
 * node:http request handler, and an undici interceptor for outgoing client
 * requests. Both share the sidecar's sampler, redaction and writer (Recorder).
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import type { Recorder } from './recorder.js';
import { watchBody } from './body-capture.js';

/**
 * Wrap `handler` so sampled requests are recorded. The body is captured as the
 * handler reads it (whichever way it reads: 'data' events, async iteration or
 * read()), so the handler sees the stream exactly as before.
 */
export function recordingHandler<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse>(
  recorder: Recorder,
  handler: RequestListener<typeof IncomingMessage, typeof ServerResponse>,
): (req: Req, res: Res) => void {
  return (req, res) => {
    const url = req.url ?? '/';
    if (!recorder.shouldRecord(url, req.headers)) {
      handler(req, res);
      return;
    }
    const timeMs = recorder.now();
    let recorded = false;
    const finish = (complete: boolean): void => {
      if (recorded) return;
      recorded = true;
      recorder.record({ timeMs, method: req.method ?? 'GET', url, headers: req.headers, body: capture.bytes(), truncated: capture.truncated || !complete });
    };
    const capture = watchBody(req, recorder.maxBodyBytes, { end: () => finish(true) });
    // A handler that answers without reading the body: record what is known, marked incomplete if a body was announced.
    res.once('close', () => finish(req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined));
    handler(req, res);
  };
}

function headersOf(raw: Dispatcher.DispatchOptions['headers']): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  if (!raw) return out;
  if (Array.isArray(raw)) {
    for (let i = 0; i + 1 < raw.length; i += 2) out[String(raw[i]).toLowerCase()] = String(raw[i + 1]);
    return out;
  }
  const entries =
    Symbol.iterator in (raw as object)
      ? [...(raw as Iterable<[string, string | string[] | undefined]>)]
      : Object.entries(raw as Record<string, string | string[] | undefined>);
  for (const [name, value] of entries) if (value !== undefined) out[name.toLowerCase()] = value;
  return out;
}

/**
 * An undici interceptor that records the requests a client sends
 * (`new Agent().compose(recordingInterceptor(recorder))`). Bodies given as
 * strings or bytes are kept; streamed bodies are recorded as truncated.
 */
export function recordingInterceptor(recorder: Recorder): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (options, handler) => {
    const headers = headersOf(options.headers);
    if (recorder.shouldRecord(options.path, headers)) {
      const body = options.body;
      const bytes = typeof body === 'string' ? Buffer.from(body) : body instanceof Uint8Array ? Buffer.from(body) : undefined;
      const truncated = (body !== undefined && body !== null && bytes === undefined) || (bytes?.length ?? 0) > recorder.maxBodyBytes;
      recorder.record({
        timeMs: recorder.now(),
        method: options.method,
        url: options.path,
        headers,
        body: truncated ? Buffer.alloc(0) : (bytes ?? Buffer.alloc(0)),
        truncated,
      });
    }
    return dispatch(options, handler);
  };
}
