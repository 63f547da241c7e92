// Scrolling between command marks (like VS Code's MarkNavigationAddon):
// Ctrl/Cmd+Up/Down, Go to Command and deep links, with a short highlight of
// the line scrolled to.

import type { IMarker, Terminal } from '@xterm/xterm';

export class MarkNavigation {
  #term: Terminal;
  /** The mark of the last jump, while the viewport has not moved since. */
  #jumpLine: number | undefined;
  #jumpViewport: number | undefined;

  constructor(term: Terminal) {
    this.#term = term;
  }

  /** Previous / next mark relative to the viewport (or to the last jump). */
  jump(dir: -1 | 1, markers: readonly (IMarker | undefined)[]): void {
    const lines = markers
      .filter((m): m is IMarker => !!m && !m.isDisposed && m.line >= 0)
      .map((m) => m.line)
      .sort((a, b) => a - b);
    if (lines.length === 0) return;
    const t = this.#term;
    const b = t.buffer.active;
    const ref = this.#jumpViewport === b.viewportY && this.#jumpLine !== undefined ? this.#jumpLine : dir < 0 ? b.viewportY + t.rows : b.viewportY - 1;
    const target = dir < 0 ? [...lines].reverse().find((l) => l < ref) : lines.find((l) => l > ref);
    if (target === undefined) {
      if (dir > 0) t.scrollToBottom();
      this.#jumpLine = undefined;
      return;
    }
    this.#scrollToLine(target);
    this.#jumpLine = target;
    this.#jumpViewport = t.buffer.active.viewportY;
    const m = markers.find((x) => x?.line === target);
    if (m) this.#flash(m);
  }

  /** Scroll to a mark and highlight it; false if it is gone from the buffer. */
  reveal(marker: IMarker): boolean {
    if (marker.isDisposed || marker.line < 0) return false;
    this.#scrollToLine(marker.line);
    this.#flash(marker);
    return true;
  }

  #scrollToLine(line: number): void {
    // Leave one line of context above the command when possible.
    this.#term.scrollToLine(Math.max(0, line - 1));
  }

  #flash(marker: IMarker): void {
    const d = this.#term.registerDecoration({ marker, width: this.#term.cols, layer: 'bottom' });
    d?.onRender((el) => el.classList.add('terminal-command-highlight'));
    setTimeout(() => d?.dispose(), 1200);
  }
}
