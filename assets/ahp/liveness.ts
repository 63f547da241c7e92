// Liveness of the client's link: a protocol ping every interval gives the
// latency, and a ping left unanswered while nothing at all arrives for the
// timeout means the link is dead (a frozen proxy, a lost Wi-Fi), noticed in
// seconds rather than after TCP's minutes.

import type { Timers } from './transport';

export interface LivenessOptions {
  timers: Timers;
  intervalMs: number;
  timeoutMs: number;
  /** Sends a ping; settles when it is answered or fails. */
  ping: () => Promise<unknown>;
  /** A ping's round trip, in ms. */
  onLatency: (ms: number) => void;
  /** The link is dead: the session drops the socket. */
  onDead: () => void;
}

export class Liveness {
  readonly #o: LivenessOptions;
  #timer: unknown;
  #deadline: unknown;
  /** When the outstanding ping was sent (undefined: none outstanding). */
  #sentAt: number | undefined;
  /** When the current socket last delivered a frame. */
  #lastReceived = 0;
  /** Bumped by stop: answers to pings of an earlier run are ignored. */
  #run = 0;

  constructor(o: LivenessOptions) {
    this.#o = o;
  }

  /** A frame arrived (or a socket was opened): a sign of life. */
  received(): void {
    this.#lastReceived = this.#o.timers.now();
  }

  /** Pings now and every interval. */
  start(): void {
    this.stop();
    this.ping();
    this.#timer = this.#o.timers.setInterval(() => this.ping(), this.#o.intervalMs);
  }

  stop(): void {
    this.#run++;
    if (this.#timer !== undefined) this.#o.timers.clearInterval(this.#timer);
    this.#timer = undefined;
    this.#answered();
  }

  /** Sends a ping unless one is outstanding; its deadline watches the link. */
  ping(): void {
    if (this.#sentAt !== undefined) return;
    const run = this.#run;
    const t0 = this.#o.timers.now();
    this.#sentAt = t0;
    this.#o.ping().then(
      () => {
        if (run !== this.#run) return;
        this.#answered();
        this.#o.onLatency(Math.round((this.#o.timers.now() - t0) * 10) / 10);
      },
      () => {
        if (run === this.#run) this.#answered();
      },
    );
    this.#armDeadline();
  }

  #answered(): void {
    this.#sentAt = undefined;
    this.#o.timers.clearTimeout(this.#deadline);
  }

  /**
   * The link is dead when a ping is outstanding and nothing at all arrived
   * for timeoutMs: output counts as a sign of life (a ping's answer may
   * queue behind a flood of it).
   */
  #armDeadline(): void {
    this.#o.timers.clearTimeout(this.#deadline);
    const since = Math.max(this.#sentAt ?? 0, this.#lastReceived);
    const wait = since + this.#o.timeoutMs - this.#o.timers.now();
    this.#deadline = this.#o.timers.setTimeout(() => {
      if (this.#sentAt === undefined) return;
      if (this.#o.timers.now() - Math.max(this.#sentAt, this.#lastReceived) >= this.#o.timeoutMs) this.#o.onDead();
      else this.#armDeadline();
    }, Math.max(0, wait));
  }
}
