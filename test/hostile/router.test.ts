/**
 * The router forwards only what it may (issue 18): redirects with several
 * Location headers, writes spelled as PUT, DELETE or a method override, and
 * write paths spelled so a raw prefix match misses them.
 */
import { describe, expect, it } from 'vitest';
import { isWrite } from '../../guardrails/index.js';
import { normalizedPath } from '../../guardrails/request-path.js';
import { counters, raw, router, upstream } from '../support/router-harness.js';

describe('redirects', () => {
  it('a response with two Location headers is refused, whichever one points away', async () => {
    const target = await upstream((_req, res) => {
      res.writeHead(302, [
        ['location', '/inside'],
        ['location', 'http://evil.example/steal'],
      ]);
      res.end();
    });
    const r = await router([{ name: 'db', policy: 'isolated', target: target.url }]);
    const reply = await fetch(`${r.urls.control.db}/x`, { redirect: 'manual' });
    expect(reply.status).toBe(502);
    expect(reply.headers.get('location')).toBeNull();
    expect(await reply.text()).toContain('2 Location headers is ambiguous');
    expect(counters(r, 'control', 'db').refused).toBe(1);
  });

  it('a Location away from the target is refused on any status, not only 3xx', async () => {
    const target = await upstream((_req, res) => {
      res.writeHead(201, { location: 'http://evil.example/created' });
      res.end();
    });
    const r = await router([{ name: 'db', policy: 'isolated', target: target.url }]);
    const reply = await fetch(`${r.urls.control.db}/x`, { method: 'GET', redirect: 'manual' });
    expect(reply.status).toBe(502);
  });
});

describe('writes', () => {
  it.each(['PUT', 'DELETE', 'POST', 'PATCH', 'PROPFIND', 'MKCOL'])('%s is a write, blocked where writes are blocked', async (method) => {
    const target = await upstream();
    const r = await router([{ name: 'db', policy: 'isolated', target: target.url, writes: 'block' }]);
    const reply = await fetch(`${r.urls.control.db}/item/1`, { method, body: method === 'DELETE' || method === 'PROPFIND' || method === 'MKCOL' ? null : 'x' });
    expect(reply.status).toBe(403);
    expect(target.paths).toEqual([]);
  });

  it('method overrides are writes: headers and the _method query parameter', async () => {
    const target = await upstream();
    const r = await router([{ name: 'db', policy: 'isolated', target: target.url, writes: 'block' }]);
    for (const [header, value] of [
      ['x-http-method-override', 'DELETE'],
      ['x-http-method', 'put'],
      ['x-method-override', 'PATCH'],
    ] as const) {
      expect((await fetch(`${r.urls.control.db}/item/1`, { headers: { [header]: value } })).status).toBe(403);
    }
    expect((await fetch(`${r.urls.control.db}/item/1?_method=DELETE`)).status).toBe(403);
    // Safe methods, and a harmless override, pass.
    for (const method of ['GET', 'HEAD', 'OPTIONS']) expect((await fetch(`${r.urls.control.db}/item/1`, { method })).status).toBe(200);
    expect((await fetch(`${r.urls.control.db}/item/1`, { headers: { 'x-http-method-override': 'GET' } })).status).toBe(200);
    expect(target.paths).toEqual(['GET /item/1', 'HEAD /item/1', 'OPTIONS /item/1', 'GET /item/1']);
  });

  it('TRACE is safe by RFC 9110, and the judgement is pure', () => {
    const call = (method: string, target = '/x', headers = {}) => ({ method, target, headers });
    expect(isWrite({ writePaths: [] }, call('TRACE'), '/x')).toBe(false);
    expect(isWrite({ writePaths: [] }, call('delete'), '/x')).toBe(true);
    expect(isWrite({ writePaths: [] }, call('GET', '/x', { 'x-http-method-override': ['GET', 'DELETE'] }), '/x')).toBe(true);
  });
});

describe('write paths match what the server will act on', () => {
  const spellings = ['/ADMIN', '//admin', '/./admin', '/x/../admin', '/%61dmin', '/admin;x', '/admin%2f', '/admin/', '/Admin/users', '/%2e/admin'];

  it.each(spellings)('%s is under /admin', async (path) => {
    const target = await upstream();
    const r = await router([{ name: 'db', policy: 'isolated', target: target.url, writes: 'block', writePaths: ['/admin'] }]);
    const reply = await raw(r.urls.control.db!, `GET ${path} HTTP/1.1\r\nHost: ${new URL(r.urls.control.db!).host}\r\nConnection: close\r\n\r\n`);
    expect(reply).toMatch(/^HTTP\/1\.1 403/);
    expect(target.paths).toEqual([]);
  });

  it.each(['/%zz/admin', '/../admin', '/a%00b'])('%s cannot be normalized and is refused', async (path) => {
    const target = await upstream();
    const r = await router([{ name: 'db', policy: 'isolated', target: target.url, writes: 'allow' }]);
    const reply = await raw(r.urls.control.db!, `GET ${path} HTTP/1.1\r\nHost: ${new URL(r.urls.control.db!).host}\r\nConnection: close\r\n\r\n`);
    expect(reply).toMatch(/^HTTP\/1\.1 403/);
    expect(reply).toContain('cannot be normalized');
    expect(counters(r, 'control', 'db').refused).toBe(1);
  });

  it('paths that only look alike are not writes', () => {
    expect(normalizedPath('/administrator')).toBe('/administrator');
    expect(isWrite({ writePaths: ['/admin'] }, { method: 'GET', target: '/administrator', headers: {} }, '/administrator')).toBe(false);
    expect(normalizedPath('/a/b/../c/./d?x=/admin')).toBe('/a/c/d');
  });
});
