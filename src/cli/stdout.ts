/**
 * @module
 * Standard output as a Unix tool writes it: a write waits while the pipe is full (so a stream
 * never holds more than one buffer), and a reader that goes away (`pagewise read log | head`)
 * ends the command quietly, as it ends `cat`: the EPIPE is remembered, the work stops at the next
 * write, and the command exits 0 without a message.
 */
/** Thrown by a write after the reader went away; the command ends quietly. */
export class OutputClosed extends Error {
  constructor() {
    super("stdout was closed by its reader");
  }
}

export class Stdout {
  #closed = false;
  readonly #stream: NodeJS.WriteStream;

  readonly #onError = (err: NodeJS.ErrnoException) => {
    // Nothing can be said on a closed stdout; any error ends the output the same way.
    this.#closed = true;
    if (err.code !== "EPIPE") process.exitCode ??= 1;
  };

  constructor(stream: NodeJS.WriteStream = process.stdout) {
    this.#stream = stream;
    stream.on("error", this.#onError);
  }

  /** Stops listening; an error after the command ended is the process's to report. */
  release(): void {
    this.#stream.off("error", this.#onError);
  }

  /** The reader went away (or stdout failed): nothing more will be written. */
  get closed(): boolean {
    return this.#closed || this.#stream.destroyed;
  }

  /** Writes `chunk`, waiting while the pipe is full; OutputClosed once the reader is gone. */
  async write(chunk: string | Uint8Array): Promise<void> {
    if (this.closed) throw new OutputClosed();
    if (chunk.length === 0) return;
    if (this.#stream.write(chunk)) return;
    const stream = this.#stream;
    await new Promise<void>((resolve) => {
      const done = () => {
        for (const event of ["drain", "close", "error"]) stream.off(event, done);
        resolve();
      };
      for (const event of ["drain", "close", "error"]) stream.on(event, done);
    });
    if (this.closed) throw new OutputClosed();
  }
}
