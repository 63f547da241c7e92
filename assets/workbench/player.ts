// Replay of a terminal's recording: asciinema-player over
// the terminal area, with the exit status and duration, a list of the
// commands (the asciicast's "m" markers, one per command from shell
// integration) that jumps the player there, and a speed control. The player
// bundle (static/dist/player.js and .css, built by build.mjs) is loaded the
// first time a replay opens, so a first visit never downloads it.

import type { Options, Player, Source } from 'asciinema-player';
import { h, clear } from './dom';
import { formatDuration } from './format';

/** A marker of the recording: a command line, or a note the server wrote. */
export interface Tick {
  /** Index among all the recording's markers (the player's marker index). */
  index: number;
  /** Seconds from the start of the recording. */
  time: number;
  label: string;
  kind: 'command' | 'note';
}

export interface CastSummary {
  ticks: Tick[];
  /** Seconds from the start to the last event. */
  duration: number;
  /** The widest and tallest the terminal was (the header, then "r" events); 0 if unknown. */
  cols: number;
  rows: number;
}

// The markers termhost's recorder writes itself (terminals/recording):
// everything else is a command line.
const noteMarker = /^(exited( with code -?\d+)?|recording (paused|resumed|skipped|truncated|stopped)\b.*)$/;

/**
 * The ticks and duration of an asciicast v2 recording. Lines that are not
 * events (the header, a blank or cut last line) are skipped: the file may
 * still be being written.
 */
export function summarizeCast(text: string): CastSummary {
  const ticks: Tick[] = [];
  let duration = 0;
  let markers = 0;
  let cols = 0;
  let rows = 0;
  const lines = text.split('\n');
  const header = parseHeader(lines[0] ?? '');
  if (header) [cols, rows] = header;
  for (const line of lines) {
    const ev = parseEvent(line);
    if (!ev) continue;
    const [time, code, data] = ev;
    duration = Math.max(duration, time);
    if (code === 'r') {
      const m = /^(\d+)x(\d+)$/.exec(data);
      if (m) [cols, rows] = [Math.max(cols, Number(m[1])), Math.max(rows, Number(m[2]))];
    }
    if (code !== 'm') continue;
    ticks.push({ index: markers++, time, label: data, kind: noteMarker.test(data) ? 'note' : 'command' });
  }
  return { ticks, duration, cols, rows };
}

function parseHeader(line: string): [number, number] | undefined {
  try {
    const v = JSON.parse(line) as { width?: unknown; height?: unknown };
    if (typeof v.width === 'number' && typeof v.height === 'number') return [v.width, v.height];
  } catch {
    // Not a header: the sizes stay unknown.
  }
  return undefined;
}

/** The smallest font the player's text is fitted down to, in CSS pixels. */
export const PLAYER_LEGIBLE_PX = 10;
// A monospace cell is about 0.6 of the font size wide and 1.25 high
// (asciinema-player's line height).
const CELL_W = 0.6;
const CELL_H = 1.25;

/**
 * How the player fits a cols×rows recording in a box: scaled to the whole
 * box while the text stays legible, else to its width (the box scrolls
 * down), else not at all ("none": a legible fixed font, the box scrolls
 * both ways).
 */
export function playerFit(box: { w: number; h: number }, cols: number, rows: number): 'both' | 'width' | 'none' {
  if (!cols || !rows || !box.w || !box.h) return 'both';
  if (box.w / (cols * CELL_W) < PLAYER_LEGIBLE_PX) return 'none';
  return box.h / (rows * CELL_H) < PLAYER_LEGIBLE_PX ? 'width' : 'both';
}

function parseEvent(line: string): [number, string, string] | undefined {
  if (!line.startsWith('[')) return undefined;
  try {
    const v: unknown = JSON.parse(line);
    if (Array.isArray(v) && typeof v[0] === 'number' && typeof v[1] === 'string' && typeof v[2] === 'string') return [v[0], v[1], v[2]];
  } catch {
    // A line cut by the size cap or still being written.
  }
  return undefined;
}

/** "0:07", "12:03", "1:02:03": a position in the recording. */
export function formatClock(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const hh = Math.floor(s / 3600);
  const mm = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return hh > 0 ? `${hh}:${String(mm).padStart(2, '0')}:${ss}` : `${mm}:${ss}`;
}

/** The header line: "Exited with code 3 · 4.2 s". */
export function exitSummary(exited: boolean, exitCode: number | undefined, duration: number): string {
  const status = !exited ? 'Still running (recorded so far)' : exitCode === undefined ? 'Exited' : `Exited with code ${exitCode}`;
  return `${status} · ${formatDuration(duration * 1000)}`;
}

export const speeds = [0.5, 1, 2, 4, 8] as const;

type CreatePlayer = (src: Source, el: HTMLElement, opts?: Options) => Player;

export interface PlayerAssets {
  script: string;
  style: string;
}

let loading: Promise<CreatePlayer> | undefined;

/** Loads static/dist/player.js and .css once; the script publishes asciinema-player's create. */
function loadPlayer(assets: PlayerAssets): Promise<CreatePlayer> {
  loading ??= Promise.all([
    loadElement(h('link', { rel: 'stylesheet', href: assets.style })),
    loadElement(h('script', { src: assets.script })),
  ]).then(
    () => (globalThis as unknown as { __termhostPlayer: { create: CreatePlayer } }).__termhostPlayer.create,
    (e: unknown) => {
      loading = undefined; // let a later replay try again
      throw e;
    },
  );
  return loading;
}

function loadElement(el: HTMLLinkElement | HTMLScriptElement): Promise<void> {
  return new Promise((resolve, reject) => {
    el.addEventListener('load', () => resolve());
    el.addEventListener('error', () => reject(new Error('could not load the player')));
    document.head.append(el);
  });
}

/** What a replay shows. */
export interface ReplayTarget {
  title: string;
  castUrl: string;
  exited: boolean;
  exitCode: number | undefined;
  /** The terminal ran a program directly (termhost run), not a shell. */
  runsCommand?: boolean;
}

/** The replay panel over one terminal's area; Escape or Close removes it. */
export class ReplayPanel {
  readonly element: HTMLElement;
  #assets: PlayerAssets;
  #target: ReplayTarget;
  #onClose: () => void;
  #playerBox = h('div.replay-player');
  #summary = h('span.replay-summary', null, 'Loading the recording…');
  #ticks = h('ol.replay-ticks', { 'aria-label': 'Commands' });
  #speed: HTMLSelectElement;
  #create: CreatePlayer | undefined;
  #cast = '';
  #player: Player | undefined;
  #playing = false;
  #closed = false;
  #size = { cols: 0, rows: 0 };
  #ticksToggle: HTMLButtonElement;
  #onDocKey = (e: KeyboardEvent) => this.#onKey(e);

  constructor(assets: PlayerAssets, target: ReplayTarget, onClose: () => void) {
    this.#assets = assets;
    this.#target = target;
    this.#onClose = onClose;
    this.#speed = h('select.replay-speed', { 'aria-label': 'Playback speed', onchange: () => this.setSpeed(Number(this.#speed.value)) });
    for (const s of speeds) this.#speed.append(h('option', { value: String(s), selected: s === 1 }, `${s}×`));
    this.#ticksToggle = h('button.link-button.replay-ticks-toggle', { type: 'button', 'aria-pressed': 'true', title: 'Show or hide the list of commands', onclick: () => this.showTicks(this.element.classList.contains('ticks-hidden')) }, 'Commands');
    this.element = h(
      'div.replay-panel',
      { role: 'dialog', 'aria-label': `Replay of ${target.title}`, tabindex: -1 },
      h(
        'div.replay-header',
        null,
        this.#summary,
        this.#ticksToggle,
        h('label.replay-speed-label', null, 'Speed ', this.#speed),
        h('button.link-button.replay-close', { type: 'button', title: 'Close the replay (Escape)', onclick: () => this.close() }, 'Close'),
      ),
      h('div.replay-main', null, this.#playerBox, this.#ticks),
    );
    // On the document, capturing: Escape closes the replay wherever the
    // keyboard is (the player, the list, or a terminal a click focused).
    document.addEventListener('keydown', this.#onDocKey, true);
  }

  /** Shows or hides the list of commands beside (or, when narrow, below) the player. */
  showTicks(on: boolean): void {
    this.element.classList.toggle('ticks-hidden', !on);
    this.#ticksToggle.setAttribute('aria-pressed', String(on));
    if (this.#player) this.#mount(this.#player.getCurrentTime(), this.#playing);
  }

  /** Fetches the recording (with its host's own cookie: another host's page may be on another origin) and the player, then shows both. */
  async open(): Promise<void> {
    this.element.focus();
    try {
      const [create, res] = await Promise.all([loadPlayer(this.#assets), fetch(this.#target.castUrl, { cache: 'no-store', credentials: 'include' })]);
      if (!res.ok) throw new Error(`the recording is not available (HTTP ${res.status})`);
      this.#cast = await res.text();
      this.#create = create;
    } catch (e) {
      this.#summary.textContent = `Cannot replay: ${(e as Error).message}`;
      return;
    }
    if (this.#closed) return;
    const { ticks, duration, cols, rows } = summarizeCast(this.#cast);
    this.#size = { cols, rows };
    this.#summary.textContent = exitSummary(this.#target.exited, this.#target.exitCode, duration);
    this.#renderTicks(ticks);
    // A recording too wide to read beside the list gets the whole width.
    if (playerFit({ w: this.#playerBox.clientWidth, h: this.#playerBox.clientHeight }, cols, rows) !== 'both') this.element.classList.add('ticks-hidden');
    this.#ticksToggle.setAttribute('aria-pressed', String(!this.element.classList.contains('ticks-hidden')));
    this.#mount(0, true);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    document.removeEventListener('keydown', this.#onDocKey, true);
    this.#player?.dispose();
    this.element.remove();
    this.#onClose();
  }

  /** Jumps to a marker (a command's start) and holds there to be read. */
  async seekTick(index: number): Promise<void> {
    await this.#player?.pause();
    await this.#player?.seek({ marker: index });
  }

  /** asciinema-player takes its speed at creation: a new one continues from the same point. */
  setSpeed(speed: number): void {
    this.#speed.value = String(speed);
    if (!this.#player) return;
    this.#mount(this.#player.getCurrentTime(), this.#playing, speed);
  }

  /** For the e2e tests: where the player is. */
  state(): { time: number | undefined; duration: number | undefined; speed: number; ready: boolean; playing: boolean; fit: string } {
    return { time: this.#player?.getCurrentTime(), duration: this.#player?.getDuration(), speed: Number(this.#speed.value), ready: !!this.#player, playing: this.#playing, fit: this.#playerBox.dataset.fit ?? '' };
  }

  #mount(startAt: number, autoPlay: boolean, speed = Number(this.#speed.value)): void {
    this.#player?.dispose();
    clear(this.#playerBox);
    this.#playing = false;
    const fit = playerFit({ w: this.#playerBox.clientWidth, h: this.#playerBox.clientHeight }, this.#size.cols, this.#size.rows);
    this.#playerBox.dataset.fit = fit;
    const player = this.#create!({ data: this.#cast }, this.#playerBox, {
      speed,
      preload: true,
      controls: true,
      fit: fit === 'none' ? false : fit,
      terminalFontSize: `${PLAYER_LEGIBLE_PX + 2}px`,
    });
    player.addEventListener('play', () => (this.#playing = true));
    player.addEventListener('pause', () => (this.#playing = false));
    player.addEventListener('ended', () => (this.#playing = false));
    this.#player = player;
    // Its startAt option applies only once playback starts: seek instead, so a paused player shows the point too.
    void player.seek(startAt).then(() => (autoPlay ? player.play() : undefined));
  }

  #renderTicks(ticks: Tick[]): void {
    clear(this.#ticks);
    if (!ticks.some((t) => t.kind === 'command')) {
      const why = this.#target.runsCommand ? 'this terminal ran a program directly, not a shell' : 'shell integration was off';
      this.#ticks.append(h('li.replay-empty', null, `No commands were marked (${why}).`));
    }
    for (const t of ticks) {
      this.#ticks.append(
        h(
          'li',
          null,
          h(
            `button.replay-tick.${t.kind}`,
            { type: 'button', 'data-index': t.index, 'data-time': t.time, title: `Jump to ${formatClock(t.time)}`, onclick: () => void this.seekTick(t.index) },
            h('span.replay-tick-time', null, formatClock(t.time)),
            h('span.replay-tick-label', null, t.label),
          ),
        ),
      );
    }
  }

  #onKey(e: KeyboardEvent): void {
    if (e.key !== 'Escape') return;
    // Escape in a picker or dialog over the workbench is theirs.
    if ((e.target as Element | null)?.closest?.('.quick-input-widget, .dialog-overlay, .share-dialog')) return;
    e.preventDefault();
    e.stopPropagation();
    this.close();
  }
}

/** The workbench's replay: at most one panel open, over its terminal's area. */
export class Replays {
  current: ReplayPanel | undefined;
  #assets: PlayerAssets;

  constructor(assets: PlayerAssets) {
    this.#assets = assets;
  }

  /** Opens a replay over terminalElement's body; afterClose gives the keyboard back. */
  open(target: ReplayTarget, terminalElement: HTMLElement, afterClose: () => void): void {
    this.current?.close();
    const body = terminalElement.querySelector('.terminal-body') ?? terminalElement;
    const panel = new ReplayPanel(this.#assets, target, () => {
      if (this.current === panel) this.current = undefined;
      afterClose();
    });
    this.current = panel;
    body.append(panel.element);
    void panel.open();
  }
}
