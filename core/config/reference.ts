/**
 * The config reference (docs/config.md) generated from the JSON Schema, so
 * the documentation cannot drift from what validation accepts.
 */
import { configJsonSchema } from './schema.js';

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  description?: string;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minItems?: number;
  required?: string[];
  additionalProperties?: unknown;
}

interface Row {
  path: string;
  type: string;
  required: boolean;
  defaultValue: string;
  description: string;
}

const DURATION_PATTERN_SOURCE = '^(\\d+(\\.\\d+)?(ms|s|m|h|d))+$';

function typeOf(schema: JsonSchema): string {
  if (schema.const !== undefined) return `\`${JSON.stringify(schema.const)}\``;
  if (schema.enum) return schema.enum.map((v) => `\`${JSON.stringify(v)}\``).join(' \\| ');
  if (schema.pattern === DURATION_PATTERN_SOURCE) return 'duration';
  if (schema.format === 'uri') return 'URL';
  if (schema.type === 'array') return `list of ${schema.items ? typeOf(schema.items) : 'values'}`;
  const type = Array.isArray(schema.type) ? schema.type.join(' \\| ') : (schema.type ?? 'any');
  const bounds: string[] = [];
  if (schema.exclusiveMinimum !== undefined) bounds.push(`> ${schema.exclusiveMinimum}`);
  if (schema.minimum !== undefined) bounds.push(`>= ${schema.minimum}`);
  if (schema.maximum !== undefined && schema.maximum < Number.MAX_SAFE_INTEGER) bounds.push(`<= ${schema.maximum}`);
  return bounds.length > 0 ? `${type} (${bounds.join(', ')})` : type;
}

function collect(schema: JsonSchema, path: string, required: boolean, rows: Row[]): void {
  const variants = schema.oneOf ?? schema.anyOf;
  if (variants) {
    if (path !== '')
      rows.push({ path, type: 'one of the forms below', required, defaultValue: fmtDefault(schema.default), description: schema.description ?? '' });
    for (const variant of variants) {
      const discriminator = Object.entries(variant.properties ?? {}).find(([, p]) => p.const !== undefined);
      const label = discriminator ? `${path} (${discriminator[0]}: ${String(discriminator[1].const)})` : path;
      collect({ ...variant, description: variant.description ?? '' }, label, required, rows);
    }
    return;
  }
  if (schema.type === 'object' && schema.properties) {
    if (path !== '') rows.push({ path, type: 'object', required, defaultValue: '', description: schema.description ?? '' });
    const requiredKeys = new Set(schema.required ?? []);
    for (const [key, child] of Object.entries(schema.properties)) {
      if (key === '$schema') continue;
      collect(child, path === '' ? key : `${path}.${key}`, requiredKeys.has(key), rows);
    }
    return;
  }
  if (schema.type === 'array' && schema.items && (schema.items.properties || schema.items.oneOf)) {
    rows.push({ path, type: 'list', required, defaultValue: fmtDefault(schema.default), description: schema.description ?? '' });
    collect(schema.items, `${path}[]`, true, rows);
    return;
  }
  rows.push({ path, type: typeOf(schema), required, defaultValue: fmtDefault(schema.default), description: schema.description ?? '' });
}

function fmtDefault(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'object' && value !== null && Object.keys(value).length === 0) return '';
  return `\`${JSON.stringify(value)}\``;
}

const escapeCell = (text: string): string => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

/** Markdown: a short introduction, then one table row per key. */
export function configReferenceMarkdown(): string {
  const rows: Row[] = [];
  collect(configJsonSchema() as JsonSchema, '', true, rows);
  const lines = [
    '# Configuration reference',
    '',
    'Generated from the schema by `npx tandem schema --markdown`; do not edit by hand.',
    'Tandem reads `tandem.config.yaml`, `tandem.config.yml` or `tandem.config.json` from the working directory, or the file given with `--config`.',
    'Durations are strings such as `250ms`, `30s`, `5m`, `4h`, `1h30m`, `7d`; every duration Tandem waits for (timeouts, intervals, trial windows) is at most about 24.8 days (`2147483647ms`, the longest a timer holds), and the windows `corpus.lookback` and `triggers.configRecency` at most ten years. Unknown keys are errors; a config file is at most 1 MiB. `npx tandem schema` prints the JSON Schema for editors.',
    '',
    '| Key | Type | Required | Default | Meaning |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| \`${escapeCell(r.path)}\` | ${escapeCell(r.type)} | ${r.required && r.defaultValue === '' ? 'yes' : ''} | ${escapeCell(r.defaultValue)} | ${escapeCell(r.description)} |`,
    ),
    '',
  ];
  return lines.join('\n');
}
