// Creating and opening one xterm.js terminal: its options, the addons every
// view loads, the guards on what it may answer or copy, links, the keys the
// workbench keeps, and the multi-line paste confirmation.

import { Terminal, type IDisposable, type ITerminalAddon } from '@xterm/xterm';
import { WebLinksAddon } from '@xterm/addon-web-links';
import { Unicode11Addon } from '@xterm/addon-unicode11';
import type { Themes } from '../theme';
import { primary } from '../dom';
import { guardReplies } from '../replies';
import { handleOsc52 } from '../clipboard';

export function createXterm(themes: Themes): Terminal {
  return new Terminal({
    allowProposedApi: true,
    fontFamily: "'Droid Sans Mono', 'DejaVu Sans Mono', Menlo, Monaco, Consolas, 'Liberation Mono', 'Courier New', monospace",
    fontSize: 14,
    lineHeight: 1.1,
    cursorBlink: true,
    cursorStyle: 'block',
    cursorInactiveStyle: 'outline',
    scrollback: 10000,
    theme: themes.xterm,
    overviewRuler: { width: 10 },
    minimumContrastRatio: minimumContrast(themes),
    macOptionIsMeta: false,
    rightClickSelectsWord: true,
  });
}

/** Higher contrast for the high-contrast themes. */
export function minimumContrast(themes: Themes): number {
  return themes.kind.startsWith('hc') ? 7 : 4.5;
}

export interface XtermWiring {
  /** May the terminal answer the question it is parsing now (replies.ts)? */
  mayAnswer(): boolean;
  /** xterm is about to send a focus report this tab may not send. */
  focusReportSuppressed(): void;
  /** May a program's OSC 52 write reach the clipboard now? */
  mayWriteClipboard(): boolean;
  programCopy(text: string): void;
  /** Keystrokes and binary input from xterm. */
  input(data: string): void;
  focused(): void;
  /** A paste of several lines, held back to be confirmed. */
  pasteMultiline(text: string): void;
  isWorkbenchKey(e: KeyboardEvent): boolean;
  /** A link was clicked without Ctrl/Cmd. */
  linkClickedPlain(): void;
}

/** Open `t` in `box` with `addons` and the wiring; returns what to dispose with the view. */
export function openXterm(t: Terminal, box: HTMLElement, addons: ITerminalAddon[], w: XtermWiring): IDisposable[] {
  t.open(box);
  for (const a of addons) t.loadAddon(a);
  t.loadAddon(new Unicode11Addon());
  t.unicode.activeVersion = '11';
  const disposables = [
    ...guardReplies(t.parser, { mayAnswer: w.mayAnswer, focusReportSuppressed: w.focusReportSuppressed }),
    handleOsc52(t.parser, { mayWrite: w.mayWriteClipboard, write: w.programCopy }),
  ];
  t.loadAddon(
    new WebLinksAddon((e, uri) => {
      if (primary(e)) window.open(uri, '_blank', 'noopener,noreferrer');
      else w.linkClickedPlain();
    }),
  );
  t.attachCustomKeyEventHandler((e) => !(e.type === 'keydown' && w.isWorkbenchKey(e)));
  disposables.push(t.onData(w.input), t.onBinary(w.input));
  t.textarea?.addEventListener('focus', () => w.focused());
  // Confirm before pasting several lines (capture: before xterm's handler).
  t.textarea?.addEventListener(
    'paste',
    (e) => {
      const text = e.clipboardData?.getData('text/plain') ?? '';
      if (!/\r?\n/.test(text.replace(/\r?\n$/, ''))) return;
      e.preventDefault();
      e.stopImmediatePropagation();
      w.pasteMultiline(text);
    },
    true,
  );
  return disposables;
}
