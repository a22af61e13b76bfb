/** How the dashboard answers what goes wrong (issue 32): JSON to scripts, no paths on disk to visitors, strict numbers. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { StoreError } from '../../core/index.js';
import { createLocalStore, type Store } from '../../store/index.js';
import { dashboardOver } from '../support/dashboard-fixtures.js';

const TOKEN = 'a'.repeat(32);

async function localStore(): Promise<{ store: Store; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'tandem-dashboard-errors-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  const store = createLocalStore({ dir: join(dir, '.tandem') });
  await store.init();
  return { store, dir };
}

describe('dashboard errors', () => {
  it('answers an action that fails with JSON, never an HTML page, and names no store path', async () => {
    const { store, dir } = await localStore();
    const server = await dashboardOver(store, {
      token: TOKEN,
      actions: { cancel: () => Promise.resolve(undefined), calibrate: () => Promise.resolve({ id: 'x', deduplicated: false }) },
    });
    onTestFinished(() => server.close());
    const post = (path: string) =>
      fetch(`${server.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: '{}' });
    for (const path of ['/api/experiments/%E0%A4%A/cancel', `/api/experiments/${encodeURIComponent('../x')}/cancel`]) {
      const response = await post(path);
      expect(response.status, path).toBe(400);
      expect(response.headers.get('content-type'), path).toBe('application/json');
      expect(((await response.json()) as { error: string }).error, path).toMatch(/malformed escape|experiment id must be/);
    }
    const missing = await post('/api/experiments/exp-none/cancel');
    expect(missing.status).toBe(404);
    expect(await missing.text()).not.toContain(dir);
  });

  it('shows a visitor no path on disk when the store fails, and tells the operator everything', async () => {
    const { store, dir } = await localStore();
    const broken = (): Promise<never> => Promise.reject(new StoreError(`local store at ${dir}/.tandem: cannot list ${dir}/.tandem/experiments: EIO`));
    // The store's own object with its reads failing (a class instance: its methods live on the prototype).
    const experiments = Object.assign(Object.create(store.experiments) as Store['experiments'], { list: broken, count: broken });
    const failing = Object.assign(Object.create(store) as Store, { experiments });
    const logged: string[] = [];
    const server = await dashboardOver(failing, { log: (line) => logged.push(line) });
    onTestFinished(() => server.close());
    const response = await fetch(`${server.url}/`);
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(text).not.toContain(dir);
    expect(text).toContain('the details are in the log of tandem serve');
    expect(logged.join('\n')).toContain(`cannot list ${dir}/.tandem/experiments: EIO`);
    // A 404 page names no store path either, nor a missing experiment's page, nor the footer of every page.
    const healthy = await dashboardOver(store);
    onTestFinished(() => healthy.close());
    for (const url of [`${server.url}/nowhere`, `${healthy.url}/experiments/nope`]) {
      const notFound = await fetch(url);
      expect([notFound.status, (await notFound.text()).includes(dir)], url).toEqual([404, false]);
    }
    const home = await (await fetch(`${healthy.url}/`)).text();
    expect([home.includes(dir), home.includes('<footer>store: local files</footer>')]).toEqual([false, true]);
  });

  it('reads page numbers as decimal digits only', async () => {
    const { store } = await localStore();
    const server = await dashboardOver(store);
    onTestFinished(() => server.close());
    for (const page of ['0x10', '1e1', '-1', '0', '1.0']) expect((await fetch(`${server.url}/?page=${page}`)).status, page).toBe(400);
    expect((await fetch(`${server.url}/?page=1`)).status).toBe(200);
  });
});
