import { describe, expect, it } from 'vitest';
import { transportFailureOf } from '../../net/index.js';

const withCode = (code: string): Error => Object.assign(new Error(code), { code });

describe('the kind of a transport failure', () => {
  it('reads Node and undici codes the same way for the recorder, the router and the replayer', () => {
    const cases: [unknown, string][] = [
      [withCode('ECONNREFUSED'), 'refused'],
      [withCode('ECONNRESET'), 'reset'],
      [withCode('UND_ERR_SOCKET'), 'reset'],
      [withCode('EPIPE'), 'reset'],
      [withCode('ERR_HTTP2_STREAM_ERROR'), 'reset'],
      [withCode('UND_ERR_HEADERS_TIMEOUT'), 'timeout'],
      [withCode('UND_ERR_BODY_TIMEOUT'), 'timeout'],
      [withCode('UND_ERR_CONNECT_TIMEOUT'), 'timeout'],
      [withCode('ETIMEDOUT'), 'timeout'],
      [withCode('UND_ERR_ABORTED'), 'aborted'],
      [Object.assign(new Error('stop'), { name: 'AbortError' }), 'aborted'],
      [withCode('EHOSTUNREACH'), 'other'],
      [new Error('no code'), 'other'],
      ['a string thrown', 'other'],
      [{ code: 42 }, 'other'],
    ];
    expect(cases.map(([error]) => transportFailureOf(error))).toEqual(cases.map(([, kind]) => kind));
  });
});
