// Command marks in the gutter and overview ruler (like VS Code's
// DecorationAddon): a marker where each command starts, a decoration coloured
// by its status, and the hover on it. xterm disposes a marker whose line is
// erased (`clear`) or trimmed from the scrollback: the command keeps its
// record, and revealing it says its output was cleared (terminalView.ts).

import type { IMarker, ITerminalAddon, Terminal } from '@xterm/xterm';
import type { Themes } from '../theme';
import { commandStatus, describeCommand, type CommandRecord } from './commandTracker';
import type { CommandHover } from './commandHover';

export class DecorationAddon implements ITerminalAddon {
  #term: Terminal | undefined;
  #themes: Themes;
  #hover: CommandHover;
  /**
   * Where the cursor was when the last command finished: a marker, not an
   * absolute line number, since once the scrollback is full each new line
   * trims the oldest and the same number names the next line.
   */
  #finishedAt: { marker: IMarker; x: number } | undefined;

  constructor(themes: Themes, hover: CommandHover) {
    this.#themes = themes;
    this.#hover = hover;
  }

  activate(term: Terminal): void {
    this.#term = term;
  }

  dispose(): void {
    this.#hover.hide();
  }

  /** Mark where a command starts (its prompt line) and decorate it. */
  placeMarker(rec: CommandRecord): void {
    const t = this.#term;
    if (!t) return;
    const b = t.buffer.active;
    // At commandExecuted the cursor sits at the start of the output line;
    // the command line itself is on the line above, where the prompt is
    // (lines above, for a multi-line one; rows above, for one that wrapped).
    // Not so for a command that follows the last one with no prompt in
    // between (the next line of a pasted block): it starts where that one's
    // output ended.
    const line = b.baseY + b.cursorY;
    const f = this.#finishedAt;
    const continues = f !== undefined && !f.marker.isDisposed && f.marker.line === line && f.x === b.cursorX;
    let y = line;
    if (!continues && b.cursorX === 0) {
      for (let n = rec.commandLine.split('\n').length; n > 0 && y > 0; n--) {
        y--;
        while (y > 0 && b.getLine(y)?.isWrapped) y--; // a wrapped row: its line starts above
      }
    }
    rec.marker = t.registerMarker(y - line);
    this.decorate(rec);
  }

  /** A command finished: remember where, then redraw its mark. */
  finished(rec: CommandRecord): void {
    const t = this.#term;
    if (t) {
      this.#finishedAt?.marker.dispose();
      this.#finishedAt = { marker: t.registerMarker(0), x: t.buffer.active.cursorX };
    }
    this.decorate(rec);
  }

  /** (Re)draw a command's mark for its current status and theme. */
  decorate(rec: CommandRecord): void {
    if (!this.#term || !rec.marker || rec.marker.isDisposed) return;
    rec.decoration?.dispose();
    const status = commandStatus(rec);
    const colors = this.#themes.colors;
    const d = this.#term.registerDecoration({
      marker: rec.marker,
      anchor: 'left',
      x: 0,
      width: 1,
      overviewRulerOptions: status === 'running' ? undefined : { color: status === 'failure' ? colors.failure : colors.success, position: 'left' },
    });
    if (!d) return;
    rec.decoration = d;
    d.onRender((el) => {
      if (el.dataset.cmd === rec.commandId && el.dataset.status === status) return;
      el.dataset.cmd = rec.commandId;
      el.dataset.status = status;
      el.classList.add('terminal-command-decoration');
      el.classList.remove('running', 'success', 'failure');
      el.classList.add(status);
      el.setAttribute('aria-label', describeCommand(rec));
      if (!el.dataset.bound) {
        el.dataset.bound = '1';
        el.addEventListener('mouseenter', () => this.#hover.show(rec, el));
        el.addEventListener('mouseleave', () => this.#hover.scheduleHide());
        el.addEventListener('click', (e) => {
          e.stopPropagation();
          this.#hover.show(rec, el, true);
        });
      }
    });
  }

  /** Redraw the finished commands' marks (after a theme change). */
  redecorate(records: readonly CommandRecord[]): void {
    for (const c of records) if (c.isComplete) this.decorate(c);
  }

  /** Remove every mark (the buffer is reset or cleared). */
  clear(records: readonly CommandRecord[]): void {
    for (const c of records) {
      c.decoration?.dispose();
      c.marker?.dispose();
      c.decoration = undefined;
      c.marker = undefined;
    }
    this.#finishedAt?.marker.dispose();
    this.#finishedAt = undefined;
    this.#hover.hide();
  }
}
