/**
 * A small stateful REST service for the tutorial (README "From the demo to
 * your own service"): notes you can list, read and create. Two versions, as a
 * real upgrade would have them: v2 wraps the list in an envelope and ignores
 * `?limit`, turns ids into strings, and (its bug) answers 404 for notes
 * beyond the tenth. Bodies over 1 KB are gzip-compressed when the client
 * accepts it, as most servers do. State lives in memory: every process starts
 * from the same 20 notes, so an arm deployed per trial starts fresh.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';

export type NotesVersion = 'v1' | 'v2';

interface Note {
  readonly id: number;
  readonly title: string;
  readonly body: string;
  readonly tags: readonly string[];
}

const seed = (): Note[] =>
  Array.from({ length: 20 }, (_, i) => ({
    id: i + 1,
    title: `note ${i + 1}`,
    body: `${'lorem ipsum '.repeat(8)}${i + 1}`,
    tags: i % 2 === 0 ? ['even'] : ['odd'],
  }));

function send(req: IncomingMessage, res: ServerResponse, status: number, value: unknown): void {
  const text = Buffer.from(JSON.stringify(value));
  const gzip = String(req.headers['accept-encoding'] ?? '').includes('gzip') && text.length > 1_024;
  res.writeHead(status, { 'content-type': 'application/json', ...(gzip ? { 'content-encoding': 'gzip' } : {}) });
  res.end(gzip ? gzipSync(text) : text);
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= 65_536) chunks.push(chunk);
    });
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        resolve(undefined);
      }
    });
    req.on('error', () => resolve(undefined));
  });
}

export function notesHandler(version: NotesVersion): (req: IncomingMessage, res: ServerResponse) => void {
  const notes = seed();
  const shown = (note: Note) => (version === 'v2' ? { ...note, id: String(note.id) } : note);
  return (req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://notes');
      const one = /^\/notes\/(\d{1,9})$/.exec(url.pathname);
      if (url.pathname === '/healthz') return send(req, res, 200, { ok: true, version });
      if (url.pathname === '/notes' && req.method === 'GET') {
        const limit = Math.min(100, Math.max(1, Number(url.searchParams.get('limit') ?? 20) || 20));
        return version === 'v1' ? send(req, res, 200, notes.slice(0, limit).map(shown)) : send(req, res, 200, { data: notes.map(shown), total: notes.length });
      }
      if (url.pathname === '/notes' && req.method === 'POST') {
        const input = (await readJson(req)) as { title?: unknown } | undefined;
        if (typeof input?.title !== 'string') return send(req, res, 400, { error: 'title must be a string' });
        const note: Note = { id: notes.length + 1, title: input.title.slice(0, 200), body: '', tags: [] };
        notes.push(note);
        return send(req, res, 201, shown(note));
      }
      if (one && req.method === 'GET') {
        const note = notes.find((n) => n.id === Number(one[1]));
        if (!note || (version === 'v2' && note.id > 10)) return send(req, res, 404, { error: 'no such note' });
        return send(req, res, 200, shown(note));
      }
      req.resume();
      return send(req, res, 404, { error: 'no route' });
    })();
  };
}

/** Listen on 127.0.0.1 (port 0: any free one); resolves with the URL. */
export async function startNotes(version: NotesVersion, port = 0): Promise<{ url: string; server: Server }> {
  const server = createServer(notesHandler(version));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}
