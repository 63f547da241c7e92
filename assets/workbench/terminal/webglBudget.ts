// How many terminals may render with WebGL at once. Browsers cap live WebGL
// contexts per page (Chromium: 16) and drop the oldest beyond that, so the
// views share a budget and the rest use xterm's DOM renderer.

import type { Terminal } from '@xterm/xterm';
import { WebglAddon } from '@xterm/addon-webgl';

export class WebglBudget {
  readonly max: number;
  #inUse = 0;

  constructor(max: number) {
    this.max = max;
  }

  get inUse(): number {
    return this.#inUse;
  }

  /** Takes one context if any is left. */
  take(): boolean {
    if (this.#inUse >= this.max) return false;
    this.#inUse++;
    return true;
  }

  give(): void {
    this.#inUse = Math.max(0, this.#inUse - 1);
  }
}

/** The budget of this page: every terminal view draws from it. */
export const pageWebglBudget = new WebglBudget(8);

/**
 * One terminal's WebGL renderer, within the budget. `attach` returns
 * undefined when the user chose the DOM renderer, the budget is spent or
 * WebGL is unavailable; `onLost` runs after a context loss, once the
 * renderer is gone and xterm has fallen back to the DOM by itself.
 */
export class WebglRenderer {
  #addon: WebglAddon | undefined;
  #budget: WebglBudget;

  private constructor(addon: WebglAddon, budget: WebglBudget) {
    this.#addon = addon;
    this.#budget = budget;
  }

  static attach(term: Terminal, onLost: () => void, budget = pageWebglBudget): WebglRenderer | undefined {
    if (localStorage.getItem('termhost.renderer') === 'dom' || !budget.take()) return undefined;
    try {
      const addon = new WebglAddon();
      const r = new WebglRenderer(addon, budget);
      addon.onContextLoss(() => {
        r.dispose();
        onLost();
      });
      term.loadAddon(addon);
      return r;
    } catch (e) {
      budget.give();
      console.info('termhost: WebGL renderer unavailable, using DOM', e);
      return undefined;
    }
  }

  dispose(): void {
    if (!this.#addon) return;
    try {
      this.#addon.dispose();
    } catch {
      /* already gone */
    }
    this.#addon = undefined;
    this.#budget.give();
  }
}
