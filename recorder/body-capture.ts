/** Collects a request body while it streams past, up to a limit; beyond it only notes the truncation. */
export class BodyCapture {
  readonly #chunks: Buffer[] = [];
  #size = 0;
  #truncated = false;

  constructor(readonly limit: number) {}

  add(chunk: Buffer | string): void {
    if (this.#truncated) return;
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    this.#size += buffer.length;
    if (this.#size > this.limit) {
      this.#truncated = true;
      this.#chunks.length = 0;
      return;
    }
    this.#chunks.push(buffer);
  }

  get truncated(): boolean {
    return this.#truncated;
  }

  /** The body so far (empty once truncated). */
  body(): Buffer {
    return this.#truncated ? Buffer.alloc(0) : Buffer.concat(this.#chunks, this.#size);
  }
}
