/** Poll `check` until it returns a value that `done` accepts, or fail at the deadline. */
export async function pollUntil<T>(
  check: () => Promise<T>,
  done: (value: T) => boolean,
  options: { deadlineMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + (options.deadlineMs ?? 10_000);
  for (;;) {
    const value = await check();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${options.what ?? 'a condition'}; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 20));
  }
}
