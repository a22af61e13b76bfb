/** Issue 71: how a rate is split between nginx's `split_clients` (hundredths of a percent) and the collector. */
import { describe, expect, it } from 'vitest';
import { edgeSampling, nginxMirrorConfig } from '../../recorder/index.js';

const at = (port: number) => ({ host: '127.0.0.1', port });

describe('the edge configuration', () => {
  it('samples at nginx in steps of 0.01% and makes up the rest at the collector', () => {
    expect(edgeSampling(1)).toEqual({ edgeRate: 1, collectorRate: 1 });
    expect(edgeSampling(0.3)).toEqual({ edgeRate: 0.3, collectorRate: 1 });
    expect(edgeSampling(0.0001)).toEqual({ edgeRate: 0.0001, collectorRate: 1 });
    const low = edgeSampling(0.00001);
    expect(low.edgeRate).toBe(0.0001);
    expect(low.collectorRate).toBeCloseTo(0.1, 12);
    // 0.015% is not a step: nginx takes 0.02% and the collector three quarters of it.
    const between = edgeSampling(0.00015);
    expect(between.edgeRate).toBeCloseTo(0.0002, 12);
    expect(between.collectorRate).toBeCloseTo(0.75, 12);
  });

  it('writes the percentage nginx reads, mirrors everything at rate 1 without a hash, and never writes a value that could end a directive', () => {
    const base = { listen: at(8080), upstream: at(8000), collector: at(9464) };
    expect(nginxMirrorConfig({ ...base, rate: 0.00015 })).toContain('    0.02% 1;');
    const all = nginxMirrorConfig({ ...base, rate: 1 });
    expect(all).not.toContain('split_clients');
    expect(all).toContain('map $request_id $tandem_mirror_sampled {');
    expect(nginxMirrorConfig({ ...base, rate: 0.5, stickyHeader: 'X-Session-Id' })).toContain('split_clients "$http_x_session_id" $tandem_mirror_sampled {');
    expect(nginxMirrorConfig({ ...base, rate: 0.5, token: 'abcdefghijklmnopq' })).toContain('proxy_set_header X-Tandem-Mirror-Token "abcdefghijklmnopq";');
    expect(() => nginxMirrorConfig({ ...base, rate: 0.5, token: 'abc"; return 500; #' })).toThrow('cannot be written into an nginx configuration');
    expect(() => nginxMirrorConfig({ ...base, rate: 0.5, stickyHeader: 'x$y' })).toThrow('not an HTTP header name');
    expect(nginxMirrorConfig({ ...base, rate: 0.5, grpc: true })).toContain('listen 127.0.0.1:8080 http2;');
  });
});
