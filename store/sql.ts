/**
 * The one place values become SQL text. ClickHouse 18.16 (what Debian ships)
 * has no server-side query parameters, so every value is escaped here on the
 * client and every identifier is checked against a strict pattern. Inserts do
 * not come through here: they send rows as JSONEachRow data, never as SQL.
 *
 * ClickHouse string literal escapes (docs: "Syntax → String literals"):
 * backslash escapes are interpreted, so both `\` and `'` must be escaped, and
 * control characters are written as escapes so a query is always one line.
 */
import { InputError } from '../core/index.js';

/** SQL text that was built here and is safe to splice. */
export class SqlFragment {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export type SqlValue = string | number | bigint | boolean | null | SqlFragment | readonly SqlValue[];

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** A database, table or column name, checked and back-quoted. */
export function ident(name: string): SqlFragment {
  if (!IDENTIFIER.test(name)) {
    throw new InputError(`SQL identifier must match ${IDENTIFIER.source}, got ${JSON.stringify(name)}`);
  }
  return new SqlFragment(`\`${name}\``);
}

/** `db`.`table` */
export function qualified(database: string, table: string): SqlFragment {
  return new SqlFragment(`${ident(database).text}.${ident(table).text}`);
}

const NAMED_ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\\\',
  "'": "\\'",
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\0': '\\0',
  '\b': '\\b',
  '\f': '\\f',
};

// Backslash, quote, and every C0 control character and DEL.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const NEEDS_ESCAPE = /[\\'\u0000-\u001f\u007f]/g;

/** A single-quoted ClickHouse string literal. */
export function quoteString(value: string): string {
  const escaped = value.replace(NEEDS_ESCAPE, (ch) => NAMED_ESCAPES[ch] ?? `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`);
  return `'${escaped}'`;
}

/** A value as a SQL literal. Numbers must be finite; arrays become `[…]`. */
export function literal(value: SqlValue): string {
  if (value instanceof SqlFragment) return value.text;
  if (value === null) return 'NULL';
  if (Array.isArray(value)) return `[${value.map((item) => literal(item as SqlValue)).join(', ')}]`;
  switch (typeof value) {
    case 'string':
      return quoteString(value);
    case 'boolean':
      return value ? '1' : '0';
    case 'bigint':
      return value.toString();
    case 'number':
      if (!Number.isFinite(value)) throw new InputError(`SQL number must be finite, got ${String(value)}`);
      // Negative numbers are parenthesized so `a -${x}` can never become a comment (`--`).
      return value < 0 || Object.is(value, -0) ? `(${String(value)})` : String(value);
    default:
      throw new InputError(`cannot use a ${typeof value} as a SQL value`);
  }
}

/**
 * Tagged template: `sql\`SELECT * FROM ${qualified(db, t)} WHERE tier = ${tier}\``.
 * Each interpolation goes through `literal`, so plain strings are always quoted.
 */
export function sql(strings: TemplateStringsArray, ...values: readonly SqlValue[]): SqlFragment {
  let text = strings[0] ?? '';
  values.forEach((value, i) => {
    text += literal(value) + (strings[i + 1] ?? '');
  });
  return new SqlFragment(text);
}

/** Join fragments, e.g. conditions with ` AND `. */
export function joinSql(parts: readonly SqlFragment[], separator: string): SqlFragment {
  return new SqlFragment(parts.map((part) => part.text).join(separator));
}
