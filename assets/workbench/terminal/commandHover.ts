// The hover of a command mark: command line, status, duration and time, with
// Copy Output / Copy Command / Copy Link. One at a time per terminal view.

import { h, svg } from '../dom';
import { icons } from '../icons';
import { formatDuration } from '../format';
import { commandStatus, type CommandRecord } from './commandTracker';

export interface CommandHoverActions {
  copyOutput(rec: CommandRecord): void;
  copyCommand(rec: CommandRecord): void;
  /** Absent where a link would not work for whoever it is passed to (see linksWorkForOthers). */
  copyLink?(rec: CommandRecord): void;
}

export class CommandHover {
  #actions: CommandHoverActions;
  #box: HTMLElement | undefined;
  #hideTimer: ReturnType<typeof setTimeout> | undefined;
  #stopWatching: (() => void) | undefined;

  constructor(actions: CommandHoverActions) {
    this.#actions = actions;
  }

  /** Show the hover above `anchor` (a mark); `sticky` (clicked) stays until a click elsewhere. */
  show(rec: CommandRecord, anchor: HTMLElement, sticky = false): void {
    clearTimeout(this.#hideTimer);
    this.hide();
    const box = h('div.monaco-hover.command-hover', { role: 'tooltip' }, ...this.#rows(rec));
    document.body.appendChild(box);
    place(box, anchor.getBoundingClientRect());
    box.addEventListener('mouseenter', () => clearTimeout(this.#hideTimer));
    box.addEventListener('mouseleave', () => this.scheduleHide());
    this.#box = box;
    this.#watchPointer(box, rec, sticky);
  }

  scheduleHide(): void {
    clearTimeout(this.#hideTimer);
    this.#hideTimer = setTimeout(() => this.hide(), 300);
  }

  hide(): void {
    this.#stopWatching?.();
    this.#stopWatching = undefined;
    this.#box?.remove();
    this.#box = undefined;
  }

  #rows(rec: CommandRecord): HTMLElement[] {
    const status = commandStatus(rec);
    const link = (label: string, run: () => void) =>
      h('a', { href: '#', onclick: (e: Event) => (e.preventDefault(), run(), this.hide()) }, label);
    return [
      h('div.hover-command', null, h('code', null, rec.commandLine || '(empty command line)')),
      h(
        'div.hover-meta',
        null,
        svg(status === 'running' ? icons.loading : status === 'failure' ? icons.error : icons.pass, `codicon status-${status}`),
        h('span', null, status === 'running' ? 'Running' : rec.exitCode === undefined ? 'Finished' : `Exit code ${rec.exitCode}`),
        rec.durationMs !== undefined ? h('span.hover-sep', null, '·') : null,
        rec.durationMs !== undefined ? h('span', null, formatDuration(rec.durationMs)) : null,
        h('span.hover-sep', null, '·'),
        h('span', null, new Date(rec.timestamp).toLocaleTimeString()),
      ),
      h(
        'div.hover-actions',
        null,
        link('Copy Output', () => this.#actions.copyOutput(rec)),
        link('Copy Command', () => this.#actions.copyCommand(rec)),
        this.#actions.copyLink ? link('Copy Link', () => this.#actions.copyLink?.(rec)) : null,
      ),
    ];
  }

  /**
   * xterm re-creates decoration elements as it renders, so mouseleave may
   * never come: watch the pointer instead.
   */
  #watchPointer(box: HTMLElement, rec: CommandRecord, sticky: boolean): void {
    const onMove = (e: MouseEvent) => {
      const t = e.target as Element | null;
      if (box.contains(t) || (t?.closest?.('.terminal-command-decoration') as HTMLElement | null)?.dataset.cmd === rec.commandId) {
        clearTimeout(this.#hideTimer);
      } else if (!sticky) {
        this.scheduleHide();
      }
    };
    const onDown = (e: MouseEvent) => {
      if (!box.contains(e.target as Node)) this.hide();
    };
    document.addEventListener('mousemove', onMove, true);
    document.addEventListener('mousedown', onDown, true);
    this.#stopWatching = () => {
      document.removeEventListener('mousemove', onMove, true);
      document.removeEventListener('mousedown', onDown, true);
    };
  }
}

/** Above the mark like VS Code's hovers, below it when there is no room. */
function place(box: HTMLElement, r: DOMRect): void {
  const bw = box.offsetWidth;
  const bh = box.offsetHeight;
  const left = Math.max(4, Math.min(window.innerWidth - bw - 8, r.left - 4));
  const top = r.top - bh - 4 >= 4 ? r.top - bh - 4 : Math.min(window.innerHeight - bh - 8, r.bottom + 4);
  box.style.left = `${left}px`;
  box.style.top = `${Math.max(4, top)}px`;
}
