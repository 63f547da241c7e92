// Skipping ahead (x-termhost/skipped): a connection that falls too far
// behind on a terminal's output (a phone on a slow link, many viewers on
// busy cores) is not cut off. The server drops the output it had not sent,
// says how much in a notice, and sends in its place a redraw of the screen:
// the terminal/data envelope at the notice's redrawSeq. Written into xterm,
// the redraw pushes the lines on screen into the scrollback and draws the
// screen exactly; the scrollback above it misses the output skipped.
//
// Here: a mark on the first line of the redraw (a gutter icon with the text
// as its hover, the overview ruler, a dashed rule over the line), and a
// screen reader announcement at most every few seconds, however often a
// stalled reader skips.

import type { IDecoration, IDisposable, IMarker, Terminal } from '@xterm/xterm';
import type { AhpClient, Timers } from '../../ahp/client';
import { extNotifications, type SkipNotice } from '../../ahp/ext';
import { formatBytes } from '../format';

export type { SkipNotice };

/** An x-termhost/skipped notice's params; undefined when malformed. */
export function skipNoticeOf(params: unknown): SkipNotice | undefined {
  if (!params || typeof params !== 'object') return undefined;
  const { channel, bytes, redrawSeq } = params as Partial<Record<keyof SkipNotice, unknown>>;
  if (typeof channel !== 'string' || !channel) return undefined;
  if (typeof bytes !== 'number' || !Number.isFinite(bytes) || bytes < 0) return undefined;
  if (typeof redrawSeq !== 'number' || !Number.isSafeInteger(redrawSeq) || redrawSeq < 0) return undefined;
  return { channel, bytes, redrawSeq };
}

/** What a skip mark says (its hover and aria-label). */
export function skipLabel(bytes: number, skips = 1): string {
  const times = skips > 1 ? ` in ${skips} skips` : '';
  return `Skipped ${formatBytes(bytes)} of output${times} to keep up: the screen is current, the scrollback above misses that output.`;
}

/** A mark: one skip, or the skips that redrew the same line. */
interface Mark {
  marker: IMarker;
  buffer: 'normal' | 'alternate';
  bytes: number;
  skips: number;
  decorations: IDecoration[];
}

export interface SkipMarkHost {
  /** The overview ruler's color for a mark (the theme's warning color). */
  color(): string;
  /** A mark was clicked or tapped (a phone has no hover): show its text. */
  show(text: string): void;
}

/** Where the terminal's output goes: the view's WriteQueue. */
export interface SkipSink {
  write(data: string, replay: boolean): void;
  /** Run `fn` once everything written so far is parsed. */
  then(fn: () => void): void;
}

/** Notices kept waiting for their redraw (one per skip; the redraw follows its notice at once). */
const maxPending = 16;

/** The skip marks of one terminal. */
export class SkipMarks {
  readonly #term: Terminal;
  readonly #sink: SkipSink;
  readonly #host: SkipMarkHost;
  /** Notices whose redraw is not written yet, by redrawSeq. */
  #pending: SkipNotice[] = [];
  #marks: Mark[] = [];
  /** xterm is parsing a redraw: its switch to the main screen is not the program leaving its full screen. */
  #redrawing = false;
  /**
   * Skips whose redraw ended on the alternate screen (a full-screen
   * program) since the main screen was last shown: the main screen is
   * marked with them when the program leaves.
   */
  #onAlt: { bytes: number; skips: number } | undefined;
  #disposables: IDisposable[] = [];

  constructor(term: Terminal, sink: SkipSink, host: SkipMarkHost) {
    this.#term = term;
    this.#sink = sink;
    this.#host = host;
    this.#disposables.push(
      term.buffer.onBufferChange((b) => {
        if (b.type === 'normal' && !this.#redrawing) this.#markMainScreen();
      }),
    );
  }

  /** An x-termhost/skipped notice for this terminal: the terminal/data at its redrawSeq is the redraw. */
  expect(n: SkipNotice): void {
    const i = this.#pending.findIndex((p) => p.redrawSeq >= n.redrawSeq);
    if (i < 0) this.#pending.push(n);
    else if (this.#pending[i]!.redrawSeq === n.redrawSeq) this.#pending[i] = n;
    else this.#pending.splice(i, 0, n);
    if (this.#pending.length > maxPending) this.#pending.shift();
  }

  /**
   * Write a terminal/data envelope's data; a skip's redraw gets its mark
   * once parsed. `replayed`: history from a reconnect replay, which is the
   * output itself, never a redraw.
   */
  write(serverSeq: number, data: string, replayed: boolean): void {
    const skip = this.#pending.length > 0 ? this.#take(serverSeq, replayed) : undefined;
    if (!skip) return this.#sink.write(data, replayed);
    this.#sink.then(() => (this.#redrawing = true));
    this.#sink.write(data, replayed);
    this.#sink.then(() => {
      this.#redrawing = false;
      this.#redrawn(skip);
    });
  }

  /** The notice whose redraw is the data at `seq`; forgets those it went past. */
  #take(seq: number, replayed: boolean): SkipNotice | undefined {
    let hit: SkipNotice | undefined;
    while (this.#pending.length > 0 && this.#pending[0]!.redrawSeq <= seq) {
      const n = this.#pending.shift()!;
      if (n.redrawSeq === seq && !replayed) hit = n;
    }
    return hit;
  }

  /** A redraw is parsed: mark the first line it drew, the top of the screen. */
  #redrawn(n: SkipNotice): void {
    const alt = this.#onAlt;
    if (this.#term.buffer.active.type === 'alternate') {
      // A full-screen program. The redraw cleared the last mark there (it
      // passes through the main screen): this one counts every skip since
      // the main screen was shown, which is marked when the program leaves.
      this.#onAlt = { bytes: (alt?.bytes ?? 0) + n.bytes, skips: (alt?.skips ?? 0) + 1 };
      for (const m of this.#marks) if (m.buffer === 'alternate') m.marker.dispose();
      this.#markTop(this.#onAlt.bytes, this.#onAlt.skips);
      return;
    }
    this.#onAlt = undefined;
    this.#markTop(n.bytes + (alt?.bytes ?? 0), 1 + (alt?.skips ?? 0));
  }

  /** The program left the alternate screen: the main screen's top is where its last redraw left it. */
  #markMainScreen(): void {
    const alt = this.#onAlt;
    this.#onAlt = undefined;
    if (alt) this.#markTop(alt.bytes, alt.skips);
  }

  /** Mark the top line of the screen, or add to the mark already there. */
  #markTop(bytes: number, skips: number): void {
    const b = this.#term.buffer.active;
    const there = this.#marks.find((m) => m.buffer === b.type && m.marker.line === b.baseY);
    if (there) {
      there.bytes += bytes;
      there.skips += skips;
      this.#decorate(there);
      return;
    }
    const marker = this.#term.registerMarker(-b.cursorY);
    if (!marker || marker.isDisposed) return;
    const mark: Mark = { marker, buffer: b.type, bytes, skips, decorations: [] };
    this.#marks.push(mark);
    // Erased (`clear`, the program leaving the alternate screen) or trimmed from the scrollback.
    marker.onDispose(() => {
      for (const d of mark.decorations) d.dispose();
      this.#marks = this.#marks.filter((m) => m !== mark);
    });
    this.#decorate(mark);
  }

  /** (Re)draw a mark: a dashed rule over its line, and the icon in the gutter and the overview ruler. */
  #decorate(m: Mark): void {
    for (const d of m.decorations) d.dispose();
    m.decorations = [];
    if (m.marker.isDisposed) return;
    const label = skipLabel(m.bytes, m.skips);
    const rule = this.#term.registerDecoration({ marker: m.marker, anchor: 'left', x: 0, width: this.#term.cols });
    rule?.onRender((el) => el.classList.add('terminal-skip-rule'));
    const icon = this.#term.registerDecoration({
      marker: m.marker,
      anchor: 'left',
      x: 0,
      width: 1,
      overviewRulerOptions: { color: this.#host.color(), position: 'full' },
    });
    let bound = false;
    icon?.onRender((el) => {
      el.classList.add('terminal-skip-decoration');
      el.title = label;
      el.setAttribute('aria-label', label);
      if (bound) return;
      bound = true;
      el.addEventListener('click', (e) => {
        e.stopPropagation();
        this.#host.show(label);
      });
    });
    m.decorations = [rule, icon].filter((d): d is IDecoration => !!d);
  }

  /** The marks, oldest first. */
  get marks(): { line: number; buffer: 'normal' | 'alternate'; bytes: number; skips: number; label: string; decorated: boolean }[] {
    return this.#marks.map((m) => ({ line: m.marker.line, buffer: m.buffer, bytes: m.bytes, skips: m.skips, label: skipLabel(m.bytes, m.skips), decorated: m.decorations.length === 2 }));
  }

  /** Redraw the marks (the theme changed). */
  redecorate(): void {
    for (const m of this.#marks) this.#decorate(m);
  }

  /**
   * Remove every mark (the buffer is about to be reset or cleared; call it
   * from the write queue, in order). Notices still waiting for their
   * redraw stay: the redraw comes after.
   */
  clear(): void {
    this.#redrawing = false;
    this.#onAlt = undefined;
    for (const m of [...this.#marks]) m.marker.dispose();
    this.#marks = [];
  }

  dispose(): void {
    this.clear();
    for (const d of this.#disposables) d.dispose();
  }
}

/**
 * Says skips to a screen reader, at most once every `quietMs`: the first
 * at once, then what came meanwhile as one total per terminal.
 */
export class SkipAnnouncer {
  readonly #say: (text: string) => void;
  readonly #timers: Pick<Timers, 'setTimeout'>;
  readonly #quietMs: number;
  #quiet = false;
  /** Skips not said yet, by terminal name. */
  #since = new Map<string, { bytes: number; skips: number }>();

  constructor(say: (text: string) => void, timers: Pick<Timers, 'setTimeout'> = { setTimeout: (fn, ms) => setTimeout(fn, ms) }, quietMs = 10_000) {
    this.#say = say;
    this.#timers = timers;
    this.#quietMs = quietMs;
  }

  skipped(name: string, bytes: number): void {
    if (this.#quiet) {
      const s = this.#since.get(name) ?? { bytes: 0, skips: 0 };
      s.bytes += bytes;
      s.skips++;
      this.#since.set(name, s);
      return;
    }
    this.#say(`Terminal “${name}” skipped ${formatBytes(bytes)} of output to keep up. Its screen is current; its scrollback misses that output.`);
    this.#wait();
  }

  #wait(): void {
    this.#quiet = true;
    this.#timers.setTimeout(() => {
      if (this.#since.size === 0) {
        this.#quiet = false;
        return;
      }
      const said = [...this.#since].map(([name, s]) => `Terminal “${name}” skipped ${formatBytes(s.bytes)} more output${s.skips > 1 ? ` in ${s.skips} skips` : ''} to keep up.`);
      this.#since.clear();
      this.#say(said.join(' '));
      this.#wait();
    }, this.#quietMs);
  }
}

/** A terminal's view, as skips need it. */
export interface SkipTarget {
  onSkipped(n: SkipNotice): void;
}

/**
 * Route x-termhost/skipped notices to the terminal's view (its mark) and
 * the announcer; malformed notices and terminals without a view are
 * ignored. Returns the unsubscribe.
 */
export function routeSkips(client: Pick<AhpClient, 'on'>, view: (uri: string) => SkipTarget | undefined, nameOf: (uri: string) => string, announcer: SkipAnnouncer): () => void {
  return client.on('notification', (method, params) => {
    if (method !== extNotifications.skipped) return;
    const n = skipNoticeOf(params);
    const v = n && view(n.channel);
    if (!n || !v) return;
    v.onSkipped(n);
    announcer.skipped(nameOf(n.channel), n.bytes);
  });
}
