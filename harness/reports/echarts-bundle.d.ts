/**
 * ECharts' one-file ES build (charts.ts says why it is loaded) ships no declarations of its own; it is the same
 * library as the package's entry, so it has the entry's types.
 */
declare module 'echarts/dist/echarts.esm.min' {
  export * from 'echarts';
}
