// Ordered writes into xterm.js with bounded unparsed data.
//
// xterm parses asynchronously; `write(data, cb)` calls `cb` once that chunk is
// parsed. We keep at most `highWater` characters handed to xterm and not yet
// parsed; the rest waits here (the server has no pause yet, so this queue is
// where a flood accumulates). Callbacks queued with `then` run after every
// earlier chunk is parsed, which is how command markers land on the right
// line: the buffer cursor is exactly where the command started.

export interface WriteSink {
  write(data: string, cb: () => void): void;
}

type Item = { data: string } | { fn: () => void };

export class WriteQueue {
  readonly highWater: number;
  readonly chunk: number;
  #sink: WriteSink;
  #queue: Item[] = [];
  #head = 0;
  #inflight = 0;
  #queuedChars = 0;
  /** Peak of characters waiting in this queue (not yet handed to xterm). */
  peakQueued = 0;

  constructor(sink: WriteSink, highWater = 256 * 1024, chunk = 64 * 1024) {
    this.#sink = sink;
    this.highWater = highWater;
    this.chunk = chunk;
  }

  /** Characters handed to xterm and not yet parsed. */
  get inflight(): number {
    return this.#inflight;
  }

  /** Characters waiting here. */
  get queued(): number {
    return this.#queuedChars;
  }

  get idle(): boolean {
    return this.#inflight === 0 && this.#head >= this.#queue.length;
  }

  write(data: string): void {
    let i = 0;
    while (i < data.length) {
      let end = Math.min(data.length, i + this.chunk);
      const c = data.charCodeAt(end - 1);
      if (end < data.length && c >= 0xd800 && c <= 0xdbff) end++; // keep surrogate pairs whole
      const piece = data.slice(i, end);
      this.#queue.push({ data: piece });
      this.#queuedChars += piece.length;
      i = end;
    }
    if (this.#queuedChars > this.peakQueued) this.peakQueued = this.#queuedChars;
    this.#pump();
  }

  /** Run `fn` after everything written so far has been parsed. */
  then(fn: () => void): void {
    this.#queue.push({ fn });
    this.#pump();
  }

  /**
   * Drop everything not yet handed to xterm (data and callbacks), e.g. when a
   * snapshot supersedes it. Chunks already in xterm still finish parsing, so
   * a following `then` runs after them.
   */
  discardQueued(): void {
    this.#queue = [];
    this.#head = 0;
    this.#queuedChars = 0;
  }

  #pump(): void {
    while (this.#head < this.#queue.length) {
      const item = this.#queue[this.#head]!;
      if ('fn' in item) {
        if (this.#inflight > 0) return;
        this.#head++;
        try {
          item.fn();
        } catch (e) {
          console.error('termhost: write callback failed', e);
        }
        continue;
      }
      const n = item.data.length;
      if (this.#inflight > 0 && this.#inflight + n > this.highWater) return;
      this.#head++;
      this.#queuedChars -= n;
      this.#inflight += n;
      this.#sink.write(item.data, () => {
        this.#inflight -= n;
        this.#pump();
      });
    }
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
  }
}
