/** The few jStat functions the statistics tests use as an oracle (jstat ships no types). */
declare module 'jstat' {
  const jStat: {
    studentt: { cdf(x: number, dof: number): number; inv(p: number, dof: number): number };
    centralF: { cdf(x: number, df1: number, df2: number): number };
    ibeta(x: number, a: number, b: number): number;
  };
  export default jStat;
}
