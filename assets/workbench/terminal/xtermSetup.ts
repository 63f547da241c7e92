// Creating and opening one xterm.js terminal: its options (from the user's
// settings, applied live), the addons every view loads, the guards on what it
// may answer or copy, links, the keys the workbench keeps, right click, copy
// on selection and the multi-line paste confirmation.

import { Terminal, type IDisposable, type ILink, type ITerminalAddon } from '@xterm/xterm';
import { WebLinksAddon } from '@xterm/addon-web-links';
import { Unicode11Addon } from '@xterm/addon-unicode11';
import type { Themes } from '../theme';
import { primary } from '../dom';
import { guardReplies } from '../replies';
import { handleOsc52 } from '../clipboard';
import { findFileLinks } from './fileLinks';
import { tabMovesFocus, terminalSettings, type TerminalSettings } from '../settings';

export function createXterm(themes: Themes, s: TerminalSettings): Terminal {
  return new Terminal({
    allowProposedApi: true,
    lineHeight: 1.1,
    cursorInactiveStyle: 'outline',
    theme: themes.xterm,
    overviewRuler: { width: 10 },
    minimumContrastRatio: minimumContrast(themes),
    macOptionIsMeta: false,
    ...xtermOptions(s),
  });
}

/** The xterm options the settings control; all of them may change on an open terminal. */
export function xtermOptions(s: TerminalSettings) {
  return {
    fontSize: s.fontSize,
    fontFamily: s.fontFamily,
    cursorStyle: s.cursorStyle,
    cursorBlink: s.cursorBlink,
    scrollback: s.scrollback,
    screenReaderMode: s.screenReaderMode,
    rightClickSelectsWord: s.rightClickBehavior === 'selectWord',
  };
}

/** Apply changed settings to an open terminal (the caller refits: the cell size may change). */
export function applyXtermSettings(t: Terminal, s: TerminalSettings): void {
  for (const [k, v] of Object.entries(xtermOptions(s))) {
    // Setting an unchanged option can still make xterm redraw or re-measure.
    if (t.options[k as keyof typeof t.options] !== v) (t.options as Record<string, unknown>)[k] = v;
  }
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
  /** Right click asked to paste (rightClickBehavior "paste" or "copyPaste"): read the clipboard. */
  pasteClipboard(): void;
  /** An OSC 8 hyperlink was Ctrl/Cmd-clicked: confirm in the app before opening. */
  hyperlinkClicked(target: string): void;
  /** A file path (`main.go:3`) was Ctrl/Cmd-clicked. */
  fileLinkClicked(path: string): void;
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
  // OSC 8 hyperlinks: xterm's default handler uses window.confirm; non-http
  // targets are let through so they can be shown and copied, never opened.
  t.options.linkHandler = {
    allowNonHttpProtocols: true,
    activate: (e, target) => (primary(e) ? w.hyperlinkClicked(target) : w.linkClickedPlain()),
  };
  disposables.push(registerFileLinks(t, w));
  // false: xterm leaves the key to the workbench, or (Tab in Tab-moves-focus mode) to the browser.
  t.attachCustomKeyEventHandler((e) => !(e.type === 'keydown' && (w.isWorkbenchKey(e) || (e.key === 'Tab' && !e.ctrlKey && !e.altKey && !e.metaKey && tabMovesFocus()))));
  disposables.push(t.onData(w.input), t.onBinary(w.input), copyOnSelection(t));
  // Capture: before xterm's own handler, which moves its textarea under the pointer for the browser's menu.
  t.element?.addEventListener('contextmenu', (e) => rightClick(t, e, w), true);
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

/** Copy on selection (VS Code's terminal.integrated.copyOnSelection), silently as VS Code does. */
function copyOnSelection(t: Terminal): IDisposable {
  return t.onSelectionChange(() => {
    if (!terminalSettings().copyOnSelection || !t.hasSelection()) return;
    navigator.clipboard.writeText(t.getSelection()).catch((e) => console.info('termhost: copy on selection refused by the browser', e));
  });
}

/** rightClickBehavior: "default" and "selectWord" keep the browser's menu (xterm selects the word). */
function rightClick(t: Terminal, e: MouseEvent, w: XtermWiring): void {
  const how = terminalSettings().rightClickBehavior;
  if (how === 'default' || how === 'selectWord') return;
  e.preventDefault();
  e.stopPropagation();
  if (how === 'nothing') return;
  if (how === 'copyPaste' && t.hasSelection()) {
    navigator.clipboard.writeText(t.getSelection()).catch((err) => console.info('termhost: copy refused by the browser', err));
    t.clearSelection();
    return;
  }
  w.pasteClipboard();
}

/** Links for `path:line[:col]` in the output (fileLinks.ts). */
function registerFileLinks(t: Terminal, w: XtermWiring): IDisposable {
  return t.registerLinkProvider({
    provideLinks(y, callback) {
      // Offsets are string indexes: right for the ASCII paths compilers print,
      // off by a cell after a wide character earlier on the line.
      const text = t.buffer.active.getLine(y - 1)?.translateToString(true) ?? '';
      const links: ILink[] = findFileLinks(text).map((l) => ({
        range: { start: { x: l.start + 1, y }, end: { x: l.end, y } },
        text: text.slice(l.start, l.end),
        activate: (e) => (primary(e) ? w.fileLinkClicked(l.path) : w.linkClickedPlain()),
      }));
      callback(links.length ? links : undefined);
    },
  });
}
