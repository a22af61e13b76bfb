/**
 * Charts for the reports and the dashboard, drawn by Apache ECharts (a
 * maintained library: nice ticks, labels that do not overlap, legends).
 *
 * Each chart is an ECharts option that is plain JSON (no formatter
 * functions), so the same option is rendered to SVG on the server for the
 * static HTML reports (ECharts' server-side rendering: no script in the
 * report) and drawn in the browser by the dashboard from a `data-chart`
 * attribute. ECharts escapes the text it puts into SVG; the figure around it
 * carries the title as its accessible name, escaped here.
 *
 * ECharts is loaded from its one-file ES build, not from the package's entry: the entry is a tree of several
 * hundred ES modules that took Node 0.67–0.75 s to load, in every process that renders a report (`tandem
 * demo`, `run`, `report`, `serve`), against 0.09–0.12 s for the same library, version and charts as one file
 * (the same SVG, byte for byte, on the demo's reports). Its types are the package's (echarts-bundle.d.ts).
 */
import * as echarts from 'echarts/dist/echarts.esm.min';
import { escapeHtml as e } from './escape.js';

export interface Series {
  readonly name: string;
  readonly color: string;
  readonly points: readonly (readonly [number, number])[];
}

/** An ECharts option with the size it wants; JSON only. */
export interface ChartSpec {
  readonly title: string;
  readonly width: number;
  readonly height: number;
  readonly option: Readonly<Record<string, unknown>>;
}

const WIDTH = 720;
const TEXT = { color: '#333', fontFamily: 'system-ui, sans-serif' };
const finitePoints = (points: readonly (readonly [number, number])[]): [number, number][] =>
  points.filter(([a, b]) => Number.isFinite(a) && Number.isFinite(b)).map(([a, b]) => [a, b]);

/** The smallest of 1, 2, 2.5, 5 × 10^k at or above `value`, so a symmetric axis ends on a round number. */
export function niceCeil(value: number): number {
  if (!(value > 0) || !Number.isFinite(value)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * power >= value * (1 - 1e-12)) return step * power;
  return 10 * power;
}

/** Lines of (x, y) points, one per series; `markers` are labelled vertical lines (a cancellation). */
export function lineChartSpec(
  title: string,
  series: readonly Series[],
  xLabel: string,
  options: { xDomain?: [number, number]; yDomain?: [number, number]; yLabel?: string; markers?: readonly { x: number; label: string }[] } = {},
): ChartSpec | undefined {
  if (series.every((s) => finitePoints(s.points).length === 0)) return undefined;
  const markLine =
    (options.markers ?? []).length > 0
      ? {
          symbol: 'none',
          silent: true,
          lineStyle: { color: '#b00020', type: 'dashed' },
          label: { formatter: '{b}', color: '#b00020' },
          data: options.markers!.map((m) => ({ name: m.label, xAxis: m.x })),
        }
      : undefined;
  // One legend entry per line: server-side rendering measures text only approximately, so entries side by side can overlap.
  const legendHeight = 20 * series.length;
  return {
    title,
    width: WIDTH,
    height: 260 + legendHeight,
    option: {
      animation: false,
      textStyle: TEXT,
      tooltip: { trigger: 'axis', renderMode: 'richText' },
      legend: { top: 0, left: 8, orient: 'vertical', itemGap: 6 },
      grid: { left: 16, right: 32, top: legendHeight + 16, bottom: 40, containLabel: true },
      xAxis: {
        type: 'value',
        name: xLabel,
        nameLocation: 'middle',
        nameGap: 26,
        axisLabel: { hideOverlap: true },
        ...(options.xDomain ? { min: options.xDomain[0], max: options.xDomain[1] } : {}),
      },
      yAxis: {
        type: 'value',
        ...(options.yLabel ? { name: options.yLabel } : {}),
        axisLabel: { hideOverlap: true },
        ...(options.yDomain ? { min: options.yDomain[0], max: options.yDomain[1] } : {}),
      },
      series: series.map((s, i) => ({
        type: 'line',
        name: s.name,
        color: s.color,
        showSymbol: false,
        data: finitePoints(s.points),
        ...(i === 0 && markLine ? { markLine } : {}),
      })),
    },
  };
}

/**
 * Effects as dots with interval whiskers, a zero line and the ±threshold band. Effects are fractions
 * (formatEffect's scale): shown ×100 as % (relative) or percentage points (absolute).
 */
export function intervalChartSpec(
  title: string,
  rows: readonly { label: string; estimate: number; low: number; high: number }[],
  threshold: number,
  scale: 'relative' | 'absolute',
): ChartSpec | undefined {
  const values = rows.flatMap((r) => [r.estimate, r.low, r.high]).filter(Number.isFinite);
  if (values.length === 0) return undefined;
  const pct = (v: number): number => Number((v * 100).toPrecision(6));
  // Room beyond the farthest value, so no dot or whisker sits on the frame.
  const extent = niceCeil(Math.max(Math.abs(threshold) * 1.5, ...values.map(Math.abs)) * 100 * 1.1);
  const unit = scale === 'relative' ? '%' : ' pp';
  const labels = rows.map((r) => r.label);
  const band =
    Math.abs(threshold) > 0
      ? { silent: true, itemStyle: { color: 'rgba(46, 160, 67, 0.12)' }, data: [[{ xAxis: -pct(Math.abs(threshold)) }, { xAxis: pct(Math.abs(threshold)) }]] }
      : undefined;
  return {
    title,
    width: WIDTH,
    height: 60 + rows.length * 26,
    option: {
      animation: false,
      textStyle: TEXT,
      tooltip: { trigger: 'item', renderMode: 'richText' },
      grid: { left: 16, right: 32, top: 12, bottom: 36, containLabel: true },
      xAxis: { type: 'value', min: -extent, max: extent, axisLabel: { formatter: `{value}${unit}`, hideOverlap: true } },
      yAxis: { type: 'category', data: labels, inverse: true, axisTick: { show: false } },
      series: [
        {
          type: 'lines',
          coordinateSystem: 'cartesian2d',
          silent: true,
          lineStyle: { color: '#334455', width: 2, opacity: 1 },
          data: rows
            .filter((r) => Number.isFinite(r.low) && Number.isFinite(r.high))
            .map((r) => ({
              coords: [
                [pct(r.low), r.label],
                [pct(r.high), r.label],
              ],
            })),
        },
        {
          type: 'scatter',
          name: 'estimate',
          color: '#223366',
          symbolSize: 9,
          data: rows
            .filter((r) => Number.isFinite(r.estimate))
            .map((r) => ({ name: `${r.label}: [${pct(r.low)}${unit}, ${pct(r.high)}${unit}]`, value: [pct(r.estimate), r.label] })),
          markLine: { symbol: 'none', silent: true, label: { show: false }, lineStyle: { color: '#888', type: 'solid' }, data: [{ xAxis: 0 }] },
          ...(band ? { markArea: band } : {}),
        },
      ],
    },
  };
}

/** Horizontal bars, e.g. fan-out per dependency and arm; values rounded to `digits` for their labels. */
export function barChartSpec(title: string, bars: readonly { label: string; value: number; color: string }[], unit: string, digits = 2): ChartSpec | undefined {
  if (bars.length === 0) return undefined;
  return {
    title,
    width: WIDTH,
    height: 48 + bars.length * 28,
    option: {
      animation: false,
      textStyle: TEXT,
      grid: { left: 16, right: 96, top: 8, bottom: 32, containLabel: true },
      xAxis: { type: 'value', name: unit, nameLocation: 'middle', nameGap: 22, axisLabel: { hideOverlap: true } },
      yAxis: { type: 'category', data: bars.map((b) => b.label), inverse: true },
      series: [
        {
          type: 'bar',
          barMaxWidth: 18,
          label: { show: true, position: 'right' },
          data: bars.map((b) => ({ value: Number(b.value.toFixed(digits)), itemStyle: { color: b.color } })),
        },
      ],
    },
  };
}

/** The chart as inline SVG, for a page without script. */
export function renderChartSvg(spec: ChartSpec): string {
  const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, width: spec.width, height: spec.height });
  try {
    chart.setOption(spec.option);
    return `<figure class="chart" role="img" aria-label="${e(spec.title)}">${chart.renderToSVGString()}</figure>`;
  } finally {
    chart.dispose();
  }
}

const noData = (title: string): string => `<p class="empty">${e(title)}: no data</p>`;

export function lineChart(...args: Parameters<typeof lineChartSpec>): string {
  const spec = lineChartSpec(...args);
  return spec ? renderChartSvg(spec) : noData(args[0]);
}

export function intervalChart(...args: Parameters<typeof intervalChartSpec>): string {
  const spec = intervalChartSpec(...args);
  return spec ? renderChartSvg(spec) : noData(args[0]);
}

export function barChart(...args: Parameters<typeof barChartSpec>): string {
  const spec = barChartSpec(...args);
  return spec ? renderChartSvg(spec) : noData(args[0]);
}
