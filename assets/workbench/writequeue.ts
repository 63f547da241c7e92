// Ordered writes into xterm.js with bounded unparsed data.
//
// xterm parses asynchronously; `write(data, cb)` calls `cb` once that chunk is
// parsed. We keep at most `highWater` characters handed to xterm and not yet
// parsed; the rest waits here (the server has no pause yet, so this queue is
// where a flood accumulates). Callbacks queued with `then` run after every
// earlier chunk is parsed, which is how command markers land on the right
// line: the buffer cursor is exactly where the command started.
//
// Each chunk may be marked as replayed history (a snapshot's content or a
// reconnect replay). xterm parses chunks in order and calls a chunk's
// callback right after parsing it, before the next one starts, so the oldest
// chunk not yet called back is the one being parsed: `parsingReplay` tells
// the terminal's parser hooks whether the sequence at hand is history.

export interface WriteSink {
  write(data: string, cb: () => void): void;
}

type Item = { data: string; replay: boolean } | { fn: () => void };

export class WriteQueue {
  readonly highWater: number;
  readonly chunk: number;
  #sink: WriteSink;
  #queue: Item[] = [];
  #head = 0;
  #inflight = 0;
  #queuedChars = 0;
  /** Replay flags of the chunks handed to xterm and not yet parsed, oldest first. */
  #inflightReplay: boolean[] = [];
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

  /** Whether the chunk xterm is parsing now is replayed history. */
  get parsingReplay(): boolean {
    return this.#inflightReplay[0] ?? false;
  }

  get idle(): boolean {
    return this.#inflight === 0 && this.#head >= this.#queue.length;
  }

  /** Queue `data`; `replay` marks it as history (see parsingReplay). */
  write(data: string, replay = false): void {
    let i = 0;
    while (i < data.length) {
      let end = Math.min(data.length, i + this.chunk);
      const c = data.charCodeAt(end - 1);
      if (end < data.length && c >= 0xd800 && c <= 0xdbff) end++; // keep surrogate pairs whole
      const piece = data.slice(i, end);
      this.#queue.push({ data: piece, replay });
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
      this.#inflightReplay.push(item.replay);
      this.#sink.write(item.data, () => {
        this.#inflight -= n;
        this.#inflightReplay.shift();
        this.#pump();
      });
    }
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
  }
}
