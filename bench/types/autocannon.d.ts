// autocannon ships no types; the benchmark uses only its promise API.
declare module 'autocannon' {
  const autocannon: (options: Record<string, unknown>) => Promise<{ requests: { average: number } }>;
  export default autocannon;
}
