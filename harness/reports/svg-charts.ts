/**
 * Small inline SVG charts for the HTML report, drawn on the server so the
 * page needs no script and no external asset. Every label goes through
 * escapeHtml.
 */
import { escapeHtml as e } from './escape.js';

export interface Series {
  readonly name: string;
  readonly color: string;
  readonly points: readonly (readonly [number, number])[];
}

const W = 640;
const H = 260;
const PAD = { left: 56, right: 16, top: 16, bottom: 36 };

function scale(domain: readonly [number, number], range: readonly [number, number]): (v: number) => number {
  const [d0, d1] = domain;
  const span = d1 - d0 || 1;
  return (v) => range[0] + ((v - d0) / span) * (range[1] - range[0]);
}

const tick = (v: number): string => (Math.abs(v) >= 1000 ? v.toExponential(1) : Math.abs(v) >= 10 ? v.toFixed(0) : v.toFixed(2));

function frame(title: string, x: (v: number) => number, y: (v: number) => number, xDomain: readonly [number, number], yDomain: readonly [number, number], xLabel: string, body: string): string {
  const ticks = [0, 0.25, 0.5, 0.75, 1];
  const xTicks = ticks.map((t) => xDomain[0] + t * (xDomain[1] - xDomain[0]));
  const yTicks = ticks.map((t) => yDomain[0] + t * (yDomain[1] - yDomain[0]));
  return `<svg viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${e(title)}">
<rect x="${PAD.left}" y="${PAD.top}" width="${W - PAD.left - PAD.right}" height="${H - PAD.top - PAD.bottom}" fill="#fafafa" stroke="#ddd"/>
${xTicks.map((v) => `<text x="${x(v).toFixed(1)}" y="${H - PAD.bottom + 14}" text-anchor="middle" class="tick">${e(tick(v))}</text>`).join('')}
${yTicks.map((v) => `<text x="${PAD.left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end" class="tick">${e(tick(v))}</text>`).join('')}
<text x="${(W + PAD.left) / 2}" y="${H - 4}" text-anchor="middle" class="axis">${e(xLabel)}</text>
${body}
</svg>`;
}

/** Lines of (x, y) points, one per series, with a legend. */
export function lineChart(title: string, series: readonly Series[], xLabel: string, options: { xDomain?: [number, number]; yDomain?: [number, number]; markers?: readonly { x: number; label: string }[] } = {}): string {
  const all = series.flatMap((s) => s.points).filter(([a, b]) => Number.isFinite(a) && Number.isFinite(b));
  if (all.length === 0) return `<p class="empty">${e(title)}: no data</p>`;
  const xDomain = options.xDomain ?? ([Math.min(...all.map((p) => p[0])), Math.max(...all.map((p) => p[0]))] as [number, number]);
  const yDomain = options.yDomain ?? ([Math.min(0, ...all.map((p) => p[1])), Math.max(...all.map((p) => p[1]))] as [number, number]);
  const x = scale(xDomain, [PAD.left, W - PAD.right]);
  const y = scale(yDomain, [H - PAD.bottom, PAD.top]);
  const lines = series
    .map((s) => {
      const path = s.points.filter(([a, b]) => Number.isFinite(a) && Number.isFinite(b)).map(([a, b]) => `${x(a).toFixed(1)},${y(b).toFixed(1)}`).join(' ');
      return `<polyline fill="none" stroke="${e(s.color)}" stroke-width="2" points="${path}"><title>${e(s.name)}</title></polyline>`;
    })
    .join('\n');
  const legend = series.map((s, i) => `<text x="${PAD.left + 8 + i * 150}" y="${PAD.top + 14}" fill="${e(s.color)}" class="legend">■ ${e(s.name)}</text>`).join('');
  const markers = (options.markers ?? []).map((m) => `<line x1="${x(m.x).toFixed(1)}" x2="${x(m.x).toFixed(1)}" y1="${PAD.top}" y2="${H - PAD.bottom}" stroke="#c00" stroke-dasharray="4 3"/><text x="${(x(m.x) + 4).toFixed(1)}" y="${PAD.top + 28}" fill="#c00" class="legend">${e(m.label)}</text>`).join('');
  return frame(title, x, y, xDomain, yDomain, xLabel, `${lines}\n${legend}${markers}`);
}

/** Per-trial effects as dots with interval whiskers, a zero line and the ±threshold band. */
export function intervalChart(title: string, rows: readonly { label: string; estimate: number; low: number; high: number }[], threshold: number, format: (v: number) => string): string {
  const values = rows.flatMap((r) => [r.estimate, r.low, r.high]).filter(Number.isFinite);
  if (values.length === 0) return `<p class="empty">${e(title)}: no data</p>`;
  const extent = Math.max(threshold * 1.5, ...values.map(Math.abs));
  const rowH = 22;
  const height = PAD.top + rows.length * rowH + 30;
  const x = scale([-extent, extent], [120, W - PAD.right]);
  const band = `<rect x="${x(-threshold).toFixed(1)}" y="${PAD.top}" width="${(x(threshold) - x(-threshold)).toFixed(1)}" height="${rows.length * rowH}" fill="#e8f4e8"/>`;
  const zero = `<line x1="${x(0).toFixed(1)}" x2="${x(0).toFixed(1)}" y1="${PAD.top}" y2="${PAD.top + rows.length * rowH}" stroke="#888"/>`;
  const marks = rows
    .map((r, i) => {
      const cy = PAD.top + i * rowH + rowH / 2;
      const whisker = Number.isFinite(r.low) && Number.isFinite(r.high) ? `<line x1="${x(r.low).toFixed(1)}" x2="${x(r.high).toFixed(1)}" y1="${cy}" y2="${cy}" stroke="#345" stroke-width="2"/>` : '';
      const dot = Number.isFinite(r.estimate) ? `<circle cx="${x(r.estimate).toFixed(1)}" cy="${cy}" r="4" fill="#236"><title>${e(`${r.label}: ${format(r.estimate)} [${format(r.low)}, ${format(r.high)}]`)}</title></circle>` : '';
      return `<text x="8" y="${cy + 4}" class="tick">${e(r.label)}</text>${whisker}${dot}`;
    })
    .join('\n');
  const axis = [-extent, -threshold, 0, threshold, extent].map((v) => `<text x="${x(v).toFixed(1)}" y="${height - 10}" text-anchor="middle" class="tick">${e(format(v))}</text>`).join('');
  return `<svg viewBox="0 0 ${W} ${height}" width="${W}" height="${height}" role="img" aria-label="${e(title)}">${band}${zero}${marks}${axis}</svg>`;
}

/** Horizontal bars, e.g. fan-out per dependency and arm. */
export function barChart(title: string, bars: readonly { label: string; value: number; color: string }[], format: (v: number) => string): string {
  if (bars.length === 0) return `<p class="empty">${e(title)}: no data</p>`;
  const max = Math.max(...bars.map((b) => b.value), 1e-9);
  const rowH = 22;
  const height = PAD.top + bars.length * rowH + 8;
  const x = scale([0, max], [200, W - 80]);
  const body = bars
    .map((b, i) => {
      const cy = PAD.top + i * rowH;
      return `<text x="8" y="${cy + 15}" class="tick">${e(b.label)}</text><rect x="200" y="${cy + 3}" width="${Math.max(1, x(b.value) - 200).toFixed(1)}" height="${rowH - 6}" fill="${e(b.color)}"/><text x="${(x(b.value) + 6).toFixed(1)}" y="${cy + 15}" class="tick">${e(format(b.value))}</text>`;
    })
    .join('\n');
  return `<svg viewBox="0 0 ${W} ${height}" width="${W}" height="${height}" role="img" aria-label="${e(title)}">${body}</svg>`;
}
