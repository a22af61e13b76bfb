/**
 * A parser for the Prometheus text exposition format (version 0.0.4): what
 * the replayer scrapes from arms and what dependency-health detectors read.
 * Small and strict enough for our uses: comments and blank lines are skipped,
 * a line that cannot be read is reported, never guessed at.
 */

export interface PrometheusSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface ParsedExposition {
  readonly samples: PrometheusSample[];
  /** Line numbers (1-based) that could not be parsed. */
  readonly badLines: number[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;

function parseValue(text: string): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  if (text === 'NaN') return Number.NaN;
  return text.trim() === '' ? Number.NaN : Number(text);
}

/** Parse labels starting after `{` at `start`; returns the labels and the index after `}`. */
function parseLabels(line: string, start: number): { labels: Record<string, string>; end: number } | undefined {
  const labels: Record<string, string> = {};
  let i = start;
  for (;;) {
    while (line[i] === ' ' || line[i] === ',') i++;
    if (line[i] === '}') return { labels, end: i + 1 };
    const name = NAME.exec(line.slice(i))?.[0];
    if (!name) return undefined;
    i += name.length;
    if (line[i] !== '=' || line[i + 1] !== '"') return undefined;
    i += 2;
    let value = '';
    for (; i < line.length && line[i] !== '"'; i++) {
      if (line[i] === '\\') {
        const next = line[++i];
        value += next === 'n' ? '\n' : (next ?? '');
      } else {
        value += line[i];
      }
    }
    if (line[i] !== '"') return undefined;
    labels[name] = value;
    i++;
  }
}

export function parsePrometheusText(text: string): ParsedExposition {
  const samples: PrometheusSample[] = [];
  const badLines: number[] = [];
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const name = NAME.exec(line)?.[0];
    if (!name) return void badLines.push(index + 1);
    let rest = line.slice(name.length);
    let labels: Record<string, string> = {};
    if (rest.startsWith('{')) {
      const parsed = parseLabels(line, name.length + 1);
      if (!parsed) return void badLines.push(index + 1);
      labels = parsed.labels;
      rest = line.slice(parsed.end);
    }
    const [valueText] = rest.trim().split(/\s+/);
    const value = parseValue(valueText ?? '');
    if (Number.isNaN(value) && valueText !== 'NaN') return void badLines.push(index + 1);
    samples.push({ name, labels, value });
  });
  return { samples, badLines };
}
