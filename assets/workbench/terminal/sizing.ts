// Who sizes a terminal decides how it is laid out: the claim holder fits the
// terminal to its pane and sends the size (terminal/resized, debounced);
// every other tab mirrors the pty's size and scales it down to fit.

import type { Terminal } from '@xterm/xterm';
import type { FitAddon } from '@xterm/addon-fit';
import type { TerminalState } from '../../ahp/types';
import { h } from '../dom';

export interface SizingHost {
  state(): TerminalState | undefined;
  /** This tab holds the claim. */
  isHolder(): boolean;
  /** This tab may send a size now (online, not a viewer, not exited). */
  mayResize(): boolean;
  /** Dispatch terminal/resized if still wanted; true once sent. */
  dispatchResize(cols: number, rows: number): boolean;
}

export class TerminalSizing {
  /** xterm opens in here; its size is set while mirroring. */
  readonly xtermBox = h('div.terminal-xterm');
  /** Scaled down (CSS transform) while mirroring a larger pty. */
  readonly scaleBox = h('div.terminal-scale', null, this.xtermBox);
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
  }

  /** Run `onResize` whenever `el` changes size. */
  observe(el: HTMLElement, onResize: () => void): void {
    this.#observer = new ResizeObserver(onResize);
    this.#observer.observe(el);
  }

  /** Run `layout` once in the next frame, however often this is called. */
  schedule(layout: () => void): void {
    if (this.#frame) return;
    this.#frame = requestAnimationFrame(() => {
      this.#frame = 0;
      layout();
    });
  }

  get scaled(): boolean {
    return this.scaleBox.classList.contains('scaled');
  }

  /** Lay out in `body`; false if it has no size (hidden). */
  layout(body: HTMLElement): boolean {
    if (body.clientWidth === 0 || body.clientHeight === 0) return false;
    const st = this.#host.state();
    if (!st || this.#host.isHolder() || !st.cols || !st.rows) this.#fitToPane(st);
    else this.#mirror(body, st.cols, st.rows);
    return true;
  }

  /** We size the pty: fit to the pane. */
  #fitToPane(st: TerminalState | undefined): void {
    this.scaleBox.style.transform = '';
    this.scaleBox.classList.remove('scaled');
    this.xtermBox.style.width = '';
    this.xtermBox.style.height = '';
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
    const s = Math.min(1, body.clientWidth / w, body.clientHeight / hh);
    this.scaleBox.style.transform = s < 1 ? `scale(${s})` : '';
    this.scaleBox.classList.toggle('scaled', s < 1);
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
  }
}
