import { describe, expect, inject, it } from 'vitest';
import { ident, literal, qualified, quoteString, sql } from '../../store/index.js';

const url = inject('clickhouseUrl');

/** Run a query on the private test server over plain HTTP and return its JSONEachRow rows. */
async function query(text: string): Promise<Record<string, unknown>[]> {
  const response = await fetch(`${url}/`, { method: 'POST', body: `${text} FORMAT JSONEachRow` });
  const body = await response.text();
  if (!response.ok) throw new Error(body);
  return body
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const HOSTILE = [
  '',
  "'",
  "''",
  '\\',
  "\\'",
  "\\\\'",
  '\0',
  'a\0b',
  '\n',
  '\r\n',
  '\t',
  '\b\f\v',
  '\u0001\u001b\u001f\u007f',
  'ünïcødé ☕ 𝔘 \u2028\u2029',
  "' OR '1'='1",
  "'; DROP TABLE t; --",
  "\\'; SELECT 1; --",
  '`; SELECT 1',
  '/* comment */',
  '-- comment',
  '?',
  '{name:String}',
  '$1',
];

describe('sql escaping', () => {
  it('quotes strings so that backslash and quote cannot end the literal', () => {
    expect(quoteString("it's")).toBe("'it\\'s'");
    expect(quoteString('a\\b')).toBe("'a\\\\b'");
    expect(quoteString('\0\n\u0001')).toBe("'\\0\\n\\x01'");
    expect(quoteString('☕')).toBe("'☕'");
  });

  it('renders numbers, booleans, null and arrays, and refuses non-finite numbers', () => {
    expect(literal(42)).toBe('42');
    expect(literal(-1)).toBe('(-1)');
    expect(literal(1.5e-7)).toBe('1.5e-7');
    expect(literal(true)).toBe('1');
    expect(literal(null)).toBe('NULL');
    expect(literal(12345678901234567890n)).toBe('12345678901234567890');
    expect(literal(['a', 1, ["b'"]])).toBe("['a', 1, ['b\\'']]");
    expect(() => literal(Number.NaN)).toThrow(/finite/);
    expect(() => literal(Number.POSITIVE_INFINITY)).toThrow(/finite/);
  });

  it('keeps negative numbers from forming a comment', () => {
    expect(sql`SELECT 1 -${-1}`.text).toBe('SELECT 1 -(-1)');
  });

  it('accepts only plain identifiers', () => {
    expect(ident('corpus').text).toBe('`corpus`');
    expect(qualified('tandem', 'corpus').text).toBe('`tandem`.`corpus`');
    for (const bad of ['', '1abc', 'a-b', 'a`b', 'a.b', 'a b', 'x;DROP', 'é']) {
      expect(() => ident(bad)).toThrow(expect.objectContaining({ code: 'TANDEM_ERR_INPUT' }));
    }
  });

  it('round-trips every hostile string through a real ClickHouse byte for byte', async () => {
    for (const value of HOSTILE) {
      const rows = await query(sql`SELECT ${value} AS v, length(${value}) AS n`.text);
      expect(rows).toEqual([{ v: value, n: String(Buffer.byteLength(value)) }]);
    }
  });

  it('defeats injection attempts in WHERE clauses on a real ClickHouse', async () => {
    const table = `injection_${Date.now()}`;
    await query(`CREATE TABLE IF NOT EXISTS default.${table} (k String) ENGINE = Memory`).catch(() => undefined);
    await fetch(`${url}/`, { method: 'POST', body: `INSERT INTO default.${table} VALUES ('secret'), ('x')` });
    for (const value of HOSTILE) {
      const rows = await query(sql`SELECT count() AS n FROM ${qualified('default', table)} WHERE k = ${value}`.text);
      expect(rows).toEqual([{ n: '0' }]);
    }
    const arrays = await query(sql`SELECT count() AS n FROM ${qualified('default', table)} WHERE has(${HOSTILE}, k)`.text);
    expect(arrays).toEqual([{ n: '0' }]);
    const [{ n }] = (await query(`SELECT count() AS n FROM default.${table}`)) as [{ n: string }];
    expect(n).toBe('2');
  });
});
