/** Which Host names the dashboard answers, whatever address it listens on (issue 32: `--listen 0.0.0.0` turned the check off). */
import { get } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createLocalStore } from '../../store/index.js';
import { ALLOWED_HOST, dashboardHostNames } from '../../dashboard/server.js';
import { dashboardOver } from '../support/dashboard-fixtures.js';
import { runCli } from '../support/cli.js';

function statusUnder(url: string, host: string, origin?: string, path = '/'): Promise<number> {
  return new Promise((resolve, reject) =>
    get(`${url}${path}`, { headers: { host, ...(origin ? { origin } : {}) } }, (res) => resolve(res.resume() && res.statusCode!)).on('error', reject),
  );
}

describe('the dashboard answers only to its own names', () => {
  it("keeps the Host check on a wildcard listen address: loopback names and the operator's, nothing else", () => {
    const names = dashboardHostNames('0.0.0.0', 8700, ['dash.internal', 'proxy.example:443', '[fd00::5]']);
    expect(names).toEqual(['127.0.0.1:8700', 'localhost:8700', '[::1]:8700', 'dash.internal:8700', 'proxy.example:443', '[fd00::5]:8700']);
    expect(dashboardHostNames('::', 9000)).toEqual(['127.0.0.1:9000', 'localhost:9000', '[::1]:9000']);
    expect(dashboardHostNames('10.1.2.3', 80)).toContain('10.1.2.3:80');
    expect(dashboardHostNames('fd00::7', 80)).toContain('[fd00::7]:80');
  });

  it('answers an allowed name and refuses any other, for pages and for the Origin of actions', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tandem-dashboard-hosts-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const store = createLocalStore({ dir: join(dir, '.tandem') });
    await store.init();
    const server = await dashboardOver(store, { allowedHosts: ['dash.internal'] });
    onTestFinished(() => server.close());
    const port = new URL(server.url).port;
    expect(await statusUnder(server.url, `dash.internal:${port}`)).toBe(200);
    expect(await statusUnder(server.url, `attacker.example:${port}`)).toBe(421);
    expect(await statusUnder(server.url, `dash.internal:${Number(port) + 1}`)).toBe(421);
  });

  it('gives the token field no name, so a form submitted before the script loads never puts the token in a URL', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tandem-dashboard-form-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const store = createLocalStore({ dir: join(dir, '.tandem') });
    await store.init();
    const server = await dashboardOver(store, {
      token: 't'.repeat(32),
      actions: { cancel: () => Promise.resolve(undefined), calibrate: () => Promise.resolve({ id: 'x', deduplicated: false }) },
    });
    onTestFinished(() => server.close());
    const form = /<form id="token-form"[\s\S]*?<\/form>/.exec(await (await fetch(`${server.url}/`)).text())![0];
    expect(form).toContain('type="password"');
    // Only named controls are submitted: none here.
    expect(form).not.toMatch(/\bname=/);
  });

  it('validates --allowed-host: a name with a scheme or path is refused with exit 3', async () => {
    for (const bad of ['http://dash', 'dash/x', 'a b', '*', 'dash:99999x', '::1']) expect(ALLOWED_HOST.test(bad)).toBe(false);
    for (const good of ['dash', 'dash.internal:8443', '[::1]', '[fd00::5]:80', 'Dash-1.Example']) expect(ALLOWED_HOST.test(good)).toBe(true);
    const dir = await mkdtemp(join(tmpdir(), 'tandem-serve-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const result = await runCli(['serve', '--listen', '127.0.0.1:0', '--allowed-host', 'http://evil/'], { cwd: dir });
    expect(result.code).toBe(3);
    expect(result.err).toContain('--allowed-host must be a host name');
  });
});
