/**
 * Issue 69, finding 5: HTTP/2 requests whose client never finished sending them (a slowloris whose connection goes)
 * must not become corpus records, and must not reach the upstream as whole requests; they are counted as abandoned.
 * Node ends a server stream's readable side when its connection drops, as if the client had finished: before the
 * fix the sidecar recorded each such request and sent the upstream its end. (A Node client's `stream.close(code)`
 * sends its request's end before the reset: that request is finished on the wire, so it is not the case here.)
 */
import { connect, createServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { pollUntil } from '../support/poll.js';
import { records, sidecarFor, tempStore } from '../support/recording.js';

/** A cleartext HTTP/2 upstream that answers once it has the whole request. */
async function startH2Upstream(): Promise<{ url: string; opened: string[]; completed: string[] }> {
  const opened: string[] = [];
  const completed: string[] = [];
  const server = createServer();
  server.on('stream', (stream, headers) => {
    stream.on('error', () => undefined);
    opened.push(String(headers[':path']));
    let body = '';
    stream.on('data', (chunk: Buffer) => (body += chunk.toString()));
    stream.on('end', () => {
      if (stream.destroyed || stream.aborted) return;
      completed.push(`${String(headers[':path'])} ${body}`);
      stream.respond({ ':status': 200 });
      stream.end('done');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, opened, completed };
}

describe('HTTP/2 requests the client never finished', () => {
  it('are counted as abandoned, never stored, and never sent to the upstream whole when the client drops its connection', async () => {
    const upstream = await startH2Upstream();
    const { store } = await tempStore();
    const { sidecar, recorder } = await sidecarFor(upstream.url, store.corpus);
    const leaving: (() => void)[] = [];
    for (const [i, ending] of (['drop', 'drop', 'drop', 'drop'] as const).entries()) {
      const session = connect(sidecar.url);
      session.on('error', () => undefined);
      const stream = session.request({ ':method': 'POST', ':path': `/slow/${i}-${ending}`, 'content-type': 'application/json' });
      stream.on('error', () => undefined);
      stream.write('{"half": "a bo');
      leaving.push(() => session.destroy());
    }
    // Every request reached the upstream (its headers were forwarded) before its client leaves.
    await pollUntil(
      async () => upstream.opened.length,
      (n) => n === 4,
      { what: 'four requests opened upstream' },
    );
    for (const leave of leaving) leave();
    await pollUntil(
      async () => recorder.accounting.abandoned,
      (n) => n === 4,
      { what: 'four abandoned requests' },
    );
    // And one request that does finish, so the recorder demonstrably records through this sidecar.
    const session = connect(sidecar.url);
    const finished = session.request({ ':method': 'POST', ':path': '/whole', 'content-type': 'application/json' });
    finished.end('{"whole": true}');
    finished.resume();
    await new Promise((resolve) => finished.on('close', resolve));
    session.close();
    await pollUntil(
      async () => recorder.accounting,
      (a) => a.written === 1,
      { what: 'four abandoned requests and one written' },
    );
    await recorder.close();
    const stored = await records(store.corpus);
    expect(stored.map((r) => r.path)).toEqual(['/whole']);
    expect(recorder.accounting).toMatchObject({ sampled: 1, written: 1, abandoned: 4 });
    // Nor did the upstream take a half request for a whole one.
    expect(upstream.completed).toEqual(['/whole {"whole": true}']);
  });
});
