// Who sizes a terminal decides how it is laid out: the claim holder fits the
// terminal to its pane and sends the size (terminal/resized, debounced);
// every other tab mirrors the pty's size and scales it down to fit, but not
// below a legible font size: past that (a phone showing a 130×49 terminal)
// the text keeps that size and the pane pans (scrolls both ways). A "1:1"
// choice (per browser) keeps the real size and always pans.

import type { Terminal } from '@xterm/xterm';
import type { FitAddon } from '@xterm/addon-fit';
import type { TerminalState } from '../../ahp/types';
import { h } from '../dom';

/** The smallest font a mirrored terminal is scaled down to, in CSS pixels. */
export const LEGIBLE_FONT_PX = 10;

/**
 * How a terminal someone else sizes is shown when it is bigger than the
 * pane: scaled down to fit (not below a legible font), or at its real size
 * ("1:1") with the pane panning. Chosen per browser (localStorage).
 */
export type MirrorMode = 'fit' | 'actual';

const MIRROR_KEY = 'termhost.mirrorMode';
/** Dispatched on window when the mode changes here; other tabs get a storage event. */
export const MIRROR_MODE_EVENT = 'termhost-mirror-mode';

export function mirrorMode(): MirrorMode {
  try {
    return localStorage.getItem(MIRROR_KEY) === 'actual' ? 'actual' : 'fit';
  } catch {
    return 'fit';
  }
}

export function setMirrorMode(mode: MirrorMode): void {
  try {
    localStorage.setItem(MIRROR_KEY, mode);
  } catch {
    // Storage denied: the mode lasts until the page reloads.
  }
  window.dispatchEvent(new Event(MIRROR_MODE_EVENT));
}

/**
 * The scale that fits `content` (w×h) in `pane`, but no smaller than keeps
 * `fontSize` at LEGIBLE_FONT_PX, and never enlarged; `pan` if it still
 * does not fit. In 'actual' mode the scale is 1. `oversize`: the content
 * does not fit the pane at its real size.
 */
export function mirrorScale(pane: { w: number; h: number }, content: { w: number; h: number }, fontSize: number, mode: MirrorMode = 'fit'): { scale: number; pan: boolean; oversize: boolean } {
  const fit = Math.min(1, pane.w / content.w, pane.h / content.h);
  const scale = mode === 'actual' ? 1 : Math.max(fit, Math.min(1, LEGIBLE_FONT_PX / fontSize));
  return { scale, pan: scale > fit, oversize: fit < 1 };
}

export interface SizingHost {
  state(): TerminalState | undefined;
  /** This tab holds the claim. */
  isHolder(): boolean;
  /** This tab may send a size now (online, not a viewer, not exited). */
  mayResize(): boolean;
  /** The server's size policy: under 'smallest' every view that may type reports its size. */
  sizePolicy(): string | undefined;
  /** Dispatch terminal/resized if still wanted; true once sent. */
  dispatchResize(cols: number, rows: number): boolean;
}

export class TerminalSizing {
  /** xterm opens in here; its size is set, and it is scaled down (CSS transform), while mirroring. */
  readonly xtermBox = h('div.terminal-xterm');
  /** The scaled size while mirroring: what the pane scrolls over (a transform does not change the layout size). */
  readonly frame = h('div.terminal-frame', null, this.xtermBox);
  /** The pane: scrolls (pans) when the scaled terminal still does not fit. */
  readonly scaleBox = h('div.terminal-scale', null, this.frame);
  #scaled = false;
  #oversize = false;
  #term: Terminal;
  #fit: FitAddon;
  #host: SizingHost;
  #frame = 0;
  #observer: ResizeObserver | undefined;
  #lastSent = '';
  #sendTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(term: Terminal, fit: FitAddon, host: SizingHost) {
    this.#term = term;
    this.#fit = fit;
    this.#host = host;
    this.#wireTouchPan();
  }

  /**
   * A finger drag pans the pane. xterm takes touches over the terminal for
   * its scrollback and cancels the browser's scrolling, so the pane follows
   * the finger's pointer events itself, and keeps the touch moves from
   * xterm while it moves: at its edge a drag scrolls the scrollback as before.
   */
  #wireTouchPan(): void {
    const pane = this.scaleBox;
    let last: { x: number; y: number; id: number } | undefined;
    let moved = false;
    pane.addEventListener('pointerdown', (e) => {
      last = e.pointerType === 'touch' && e.isPrimary && pane.classList.contains('panning') ? { x: e.clientX, y: e.clientY, id: e.pointerId } : undefined;
    });
    pane.addEventListener('pointermove', (e) => {
      if (!last || e.pointerId !== last.id) return;
      const [left, top] = [pane.scrollLeft, pane.scrollTop];
      pane.scrollLeft += last.x - e.clientX;
      pane.scrollTop += last.y - e.clientY;
      last = { x: e.clientX, y: e.clientY, id: e.pointerId };
      moved = pane.scrollLeft !== left || pane.scrollTop !== top;
    });
    for (const end of ['pointerup', 'pointercancel']) pane.addEventListener(end, () => (last = undefined));
    pane.addEventListener(
      'touchmove',
      (e) => {
        if (!moved) return;
        moved = false;
        e.stopPropagation();
        if (e.cancelable) e.preventDefault();
      },
      { capture: true, passive: false },
    );
  }

  /** Run `onResize` whenever `el` changes size. */
  observe(el: HTMLElement, onResize: () => void): void {
    this.#observer = new ResizeObserver(onResize);
    this.#observer.observe(el);
    // The fit / 1:1 choice changed, here or in another tab.
    this.#onMode = (e: Event) => {
      if (!(e instanceof StorageEvent) || e.key === MIRROR_KEY) onResize();
    };
    window.addEventListener(MIRROR_MODE_EVENT, this.#onMode);
    window.addEventListener('storage', this.#onMode);
  }

  #onMode: ((e: Event) => void) | undefined;

  /** Run `layout` once in the next frame, however often this is called. */
  schedule(layout: () => void): void {
    if (this.#frame) return;
    this.#frame = requestAnimationFrame(() => {
      this.#frame = 0;
      layout();
    });
  }

  get scaled(): boolean {
    return this.#scaled;
  }

  /** Mirroring a terminal bigger than the pane (the fit / 1:1 choice applies). */
  get oversize(): boolean {
    return this.#oversize;
  }

  /** Lay out in `body`; false if it has no size (hidden). */
  layout(body: HTMLElement): boolean {
    if (body.clientWidth === 0 || body.clientHeight === 0) return false;
    const st = this.#host.state();
    const smallest = this.#host.sizePolicy() === 'smallest';
    if (!st || !st.cols || !st.rows || (this.#host.isHolder() && !smallest)) this.#fitToPane(st);
    else {
      // Under 'smallest' the pty is the smallest view's size: report ours, show the pty's.
      const d = smallest && this.#host.mayResize() ? this.#paneSize() : undefined;
      if (d) this.#sendSize(st, d.cols, d.rows);
      if (d && st.cols <= d.cols && st.rows <= d.rows) this.#showUnscaled(st.cols, st.rows);
      else this.#mirror(body, st.cols, st.rows);
    }
    return true;
  }

  /** What fits the pane: measured with the mirrored size taken off (#mirror sets it again). */
  #paneSize(): { cols: number; rows: number } | undefined {
    this.#unsize();
    return this.propose();
  }

  #unsize(): void {
    this.#setScale(1, false);
    for (const el of [this.xtermBox, this.frame]) {
      el.style.width = '';
      el.style.height = '';
    }
  }

  /** The pty fits the pane (the smallest view's size): shown as it is, in the pane's top left. */
  #showUnscaled(cols: number, rows: number): void {
    this.#oversize = false;
    if (cols !== this.#term.cols || rows !== this.#term.rows) this.#term.resize(cols, rows);
  }

  /** We size the pty: fit to the pane. */
  #fitToPane(st: TerminalState | undefined): void {
    this.#unsize();
    this.#oversize = false;
    const dims = this.#fit.proposeDimensions();
    if (dims && dims.cols > 1 && dims.rows > 1 && Number.isFinite(dims.cols)) {
      if (dims.cols !== this.#term.cols || dims.rows !== this.#term.rows) this.#term.resize(dims.cols, dims.rows);
      if (st && this.#host.isHolder()) this.#sendSize(st, dims.cols, dims.rows);
    }
  }

  /** Someone else sizes the pty: mirror its size and scale to fit. */
  #mirror(body: HTMLElement, cols: number, rows: number): void {
    if (cols !== this.#term.cols || rows !== this.#term.rows) this.#term.resize(cols, rows);
    const screen = this.xtermBox.querySelector('.xterm-screen') as HTMLElement | null;
    const xt = this.xtermBox.querySelector('.xterm') as HTMLElement | null;
    if (!screen || !xt) return;
    const cs = getComputedStyle(xt);
    const w = screen.offsetWidth + parseFloat(cs.paddingLeft) + parseFloat(cs.paddingRight) + 14;
    const hh = screen.offsetHeight + parseFloat(cs.paddingTop) + parseFloat(cs.paddingBottom);
    this.xtermBox.style.width = `${w}px`;
    this.xtermBox.style.height = `${hh}px`;
    const { scale, pan, oversize } = mirrorScale({ w: body.clientWidth, h: body.clientHeight }, { w, h: hh }, this.#term.options.fontSize ?? 14, mirrorMode());
    this.#oversize = oversize;
    this.#setScale(scale, pan);
    this.frame.style.width = `${w * scale}px`;
    this.frame.style.height = `${hh * scale}px`;
  }

  #setScale(scale: number, pan: boolean): void {
    this.#scaled = scale < 1;
    this.xtermBox.style.transform = scale < 1 ? `scale(${scale})` : '';
    this.scaleBox.classList.toggle('panning', pan);
  }

  /** Proposed size for the pane (for createTerminal). */
  propose(): { cols: number; rows: number } | undefined {
    const d = this.#fit.proposeDimensions();
    if (!d || !Number.isFinite(d.cols) || d.cols < 2 || d.rows < 2) return undefined;
    return { cols: d.cols, rows: d.rows };
  }

  /** Send the size again even if unchanged (new snapshot, new claim). */
  forgetSentSize(): void {
    this.#lastSent = '';
  }

  #sendSize(st: TerminalState, cols: number, rows: number): void {
    const key = `${cols}x${rows}`;
    if (st.cols === cols && st.rows === rows) {
      this.#lastSent = key;
      return;
    }
    if (key === this.#lastSent || !this.#host.mayResize()) return;
    clearTimeout(this.#sendTimer);
    this.#sendTimer = setTimeout(() => {
      if (this.#host.dispatchResize(cols, rows)) this.#lastSent = key;
    }, 80);
  }

  dispose(): void {
    this.#observer?.disconnect();
    if (this.#onMode) {
      window.removeEventListener(MIRROR_MODE_EVENT, this.#onMode);
      window.removeEventListener('storage', this.#onMode);
    }
  }
}
