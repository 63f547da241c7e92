// Which renderer a terminal draws with, and why. WebGL is only worth it on a
// hardware GPU: on a software one (SwiftShader, llvmpipe) content appears
// 2.5–4× later than with xterm's DOM renderer, so "auto" (the default) uses
// the DOM there. Browsers also cap live WebGL contexts per page (Chromium:
// 16) and drop the oldest beyond that, so the views share a budget and the
// rest use the DOM renderer.

import type { Terminal } from '@xterm/xterm';
import { WebglAddon } from '@xterm/addon-webgl';
import type { RendererSetting } from '../settings';

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

export type GpuKind = 'hardware' | 'software' | 'none';

/** Renderer strings of GPUs emulated on the CPU (WEBGL_debug_renderer_info). */
const softwareRenderer = /SwiftShader|llvmpipe|softpipe|Software|Microsoft Basic Render/i;

export function isSoftwareRenderer(name: string): boolean {
  return softwareRenderer.test(name);
}

/**
 * What this browser's WebGL 2 (what xterm's addon uses) runs on: "software"
 * when the browser says a context would have a major performance caveat or
 * the renderer is a known software one, "none" when there is no WebGL.
 */
export function probeGpu(doc: Document = document): GpuKind {
  const context = (caveat: boolean) => doc.createElement('canvas').getContext('webgl2', { failIfMajorPerformanceCaveat: caveat });
  const gl = context(true);
  if (!gl) {
    const any = context(false);
    release(any);
    return any ? 'software' : 'none';
  }
  const info = gl.getExtension('WEBGL_debug_renderer_info');
  const name = String(gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER) ?? '');
  release(gl);
  return isSoftwareRenderer(name) ? 'software' : 'hardware';
}

/** Free a probe's context now rather than at GC: contexts are capped per page. */
function release(gl: WebGL2RenderingContext | null): void {
  gl?.getExtension('WEBGL_lose_context')?.loseContext();
}

let pageGpu: GpuKind | undefined;
/** probeGpu, once per page. */
function gpuOfPage(): GpuKind {
  try {
    pageGpu ??= probeGpu();
  } catch {
    pageGpu = 'none';
  }
  return pageGpu;
}

/** A WebGL context of this page was lost (a GPU reset or a crash): "auto" stops trying WebGL. */
let contextLostOnPage = false;

export interface RendererChoice {
  renderer: 'webgl' | 'dom';
  /** Why, for the status bar: "software GPU detected". */
  why: string;
}

/** The renderer the setting asks for, before the budget and the attach itself. */
export function chooseRenderer(setting: RendererSetting, gpu: () => GpuKind, contextLost = false): RendererChoice {
  if (setting === 'dom') return { renderer: 'dom', why: 'chosen in settings' };
  if (setting === 'webgl') return { renderer: 'webgl', why: 'chosen in settings' };
  if (contextLost) return { renderer: 'dom', why: 'a WebGL context was lost on this page' };
  switch (gpu()) {
    case 'hardware':
      return { renderer: 'webgl', why: 'hardware GPU' };
    case 'software':
      return { renderer: 'dom', why: 'software GPU detected' };
    default:
      return { renderer: 'dom', why: 'WebGL unavailable' };
  }
}

/** "DOM — software GPU detected" */
export function rendererLabel(c: RendererChoice): string {
  return `${c.renderer === 'webgl' ? 'WebGL' : 'DOM'} — ${c.why}`;
}

/**
 * One terminal's WebGL renderer, within the budget. `attach` returns no
 * renderer when the choice is the DOM, the budget is spent or WebGL fails;
 * `onLost` runs after a context loss, once the renderer is gone and xterm
 * has fallen back to the DOM by itself.
 */
export class WebglRenderer {
  #addon: WebglAddon | undefined;
  #budget: WebglBudget;

  private constructor(addon: WebglAddon, budget: WebglBudget) {
    this.#addon = addon;
    this.#budget = budget;
  }

  static attach(term: Terminal, setting: RendererSetting, onLost: () => void, budget = pageWebglBudget): { webgl?: WebglRenderer; choice: RendererChoice } {
    const choice = chooseRenderer(setting, gpuOfPage, contextLostOnPage);
    if (choice.renderer === 'dom') return { choice };
    if (!budget.take()) return { choice: { renderer: 'dom', why: `${budget.max} terminals already use WebGL` } };
    try {
      const addon = new WebglAddon();
      const r = new WebglRenderer(addon, budget);
      addon.onContextLoss(() => {
        contextLostOnPage = true;
        r.dispose();
        onLost();
      });
      term.loadAddon(addon);
      return { webgl: r, choice };
    } catch (e) {
      budget.give();
      console.info('termhost: WebGL renderer unavailable, using DOM', e);
      return { choice: { renderer: 'dom', why: 'WebGL unavailable' } };
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
