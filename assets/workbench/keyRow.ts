// The on-screen key row above the status bar on phones and touch screens (as
// in Termux or Blink): the keys a soft keyboard lacks — Esc, Tab, Ctrl and
// Alt (sticky: they apply to the next key, from the row or the keyboard),
// arrows and a few symbols (if there is room). Keys go in through xterm's own input path, as
// typed keys do, and never take the focus from the terminal. Viewers, who
// cannot type, get no key row.

import { h } from './dom';

export interface Modifiers {
  ctrl: boolean;
  alt: boolean;
}

const arrowLetters: Record<string, string> = { ArrowUp: 'A', ArrowDown: 'B', ArrowRight: 'C', ArrowLeft: 'D' };

/**
 * The control character for Ctrl+`c` as xterm.js sends it for a US
 * keyboard (Ctrl+A is 0x01, Ctrl+[ is ESC, Ctrl+Space and Ctrl+2 are NUL,
 * Ctrl+3…7 are 0x1b…0x1f, Ctrl+8 and Ctrl+? are DEL, Ctrl+/ and Ctrl+- are
 * 0x1f, Ctrl+| is Ctrl+\); other characters are sent as they are.
 */
export function controlChar(c: string): string {
  const lower = c.toLowerCase();
  if (lower >= 'a' && lower <= 'z' && lower.length === 1) return String.fromCharCode(lower.charCodeAt(0) - 96);
  const code = c.charCodeAt(0);
  if (c.length === 1 && code >= 0x40 && code <= 0x5f) return String.fromCharCode(code - 0x40); // @ [ \ ] ^ _
  if (c >= '3' && c <= '7' && c.length === 1) return String.fromCharCode(code - 0x33 + 0x1b);
  const special: Record<string, string> = { ' ': '\x00', '2': '\x00', '8': '\x7f', '?': '\x7f', '/': '\x1f', '-': '\x1f', '|': '\x1c' };
  return special[c] ?? c;
}

/**
 * The bytes a key sends: `key` is a KeyboardEvent key name (Escape, Tab,
 * ArrowUp …) or one character. Arrows follow the terminal's cursor key mode
 * (DECCKM: ESC O A in application mode, ESC [ A otherwise) and carry the
 * modifiers as xterm's CSI 1;m form; Alt is an ESC prefix (meta sends escape).
 */
export function keyBytes(key: string, mods: Modifiers, applicationCursor: boolean): string {
  const arrow = arrowLetters[key];
  if (arrow) {
    const m = 1 + (mods.alt ? 2 : 0) + (mods.ctrl ? 4 : 0);
    if (m > 1) return `\x1b[1;${m}${arrow}`;
    return applicationCursor ? `\x1bO${arrow}` : `\x1b[${arrow}`;
  }
  let bytes = key === 'Escape' ? '\x1b' : key === 'Tab' ? '\t' : mods.ctrl ? controlChar(key) : key;
  if (mods.alt) bytes = '\x1b' + bytes;
  return bytes;
}

/**
 * Typed input with the sticky modifiers applied, or undefined if `data` is
 * not one key (a paste, or xterm answering a program's query): those pass
 * through unchanged and the modifiers stay for the next key.
 */
export function modifyTyped(data: string, mods: Modifiers): string | undefined {
  const arrow = /^\x1b[[O]([A-D])$/.exec(data);
  if (arrow) return keyBytes(Object.keys(arrowLetters).find((k) => arrowLetters[k] === arrow[1])!, mods, false);
  if ([...data].length !== 1) return undefined;
  if (data === '\x1b') return keyBytes('Escape', mods, false);
  if (data === '\t') return keyBytes('Tab', mods, false);
  if (data < ' ') return undefined;
  return keyBytes(data, mods, false);
}

interface KeyDef {
  key: string;
  label: string;
  title: string;
}

const keys: KeyDef[] = [
  { key: 'Escape', label: 'Esc', title: 'Escape' },
  { key: 'Tab', label: 'Tab', title: 'Tab' },
  { key: 'Ctrl', label: 'Ctrl', title: 'Control (applies to the next key)' },
  { key: 'Alt', label: 'Alt', title: 'Alt (applies to the next key)' },
  { key: 'ArrowLeft', label: '←', title: 'Left' },
  { key: 'ArrowUp', label: '↑', title: 'Up' },
  { key: 'ArrowDown', label: '↓', title: 'Down' },
  { key: 'ArrowRight', label: '→', title: 'Right' },
  { key: '|', label: '|', title: 'Vertical bar' },
  { key: '~', label: '~', title: 'Tilde' },
  { key: '/', label: '/', title: 'Slash' },
  { key: '-', label: '-', title: 'Hyphen' },
];

/** The terminal the keys go to: what the row needs of a TerminalView. */
export interface KeyTarget {
  readonly canType: boolean;
  readonly term: { readonly modes: { readonly applicationCursorKeysMode: boolean }; input(data: string, wasUserInput?: boolean): void };
}

export class KeyRow {
  readonly element: HTMLElement;
  #mods: Modifiers = { ctrl: false, alt: false };
  #modButtons: Record<'ctrl' | 'alt', HTMLElement>;
  #target: () => KeyTarget | undefined;

  /** Shown (by app.css) on narrow and touch screens, above `statusBar`; `hidden` for viewers. */
  constructor(statusBar: HTMLElement, target: () => KeyTarget | undefined, hidden: boolean) {
    this.#target = target;
    const buttons = keys.map((k) =>
      h('button.key-row-key', { type: 'button', tabindex: -1, title: k.title, 'aria-label': k.title, 'data-key': k.key, class: k.key.length === 1 ? 'symbol' : undefined, onclick: () => this.#press(k.key) }, k.label),
    );
    this.element = h('div.key-row', { role: 'toolbar', 'aria-label': 'Terminal keys', hidden }, ...buttons);
    this.#modButtons = { ctrl: buttons[2]!, alt: buttons[3]! };
    // Pressing a key must not move the focus (and close the soft keyboard).
    this.element.addEventListener('pointerdown', (e) => e.preventDefault());
    this.element.addEventListener('mousedown', (e) => e.preventDefault());
    this.#renderMods();
    statusBar.before(this.element);
  }

  /** xterm's input with the sticky modifiers applied (see modifyTyped). */
  typed(data: string): string {
    if (!this.#mods.ctrl && !this.#mods.alt) return data;
    const out = modifyTyped(data, this.#mods);
    if (out === undefined) return data;
    this.#setMods({ ctrl: false, alt: false });
    return out;
  }

  #press(key: string): void {
    if (key === 'Ctrl' || key === 'Alt') {
      const m = key === 'Ctrl' ? 'ctrl' : 'alt';
      this.#setMods({ ...this.#mods, [m]: !this.#mods[m] });
      return;
    }
    const t = this.#target();
    if (!t?.canType) return;
    const bytes = keyBytes(key, this.#mods, t.term.modes.applicationCursorKeysMode);
    this.#setMods({ ctrl: false, alt: false });
    // The same path as a typed key: xterm's onData, the input gate, the server.
    t.term.input(bytes, true);
  }

  #setMods(m: Modifiers): void {
    this.#mods = m;
    this.#renderMods();
  }

  #renderMods(): void {
    for (const m of ['ctrl', 'alt'] as const) {
      this.#modButtons[m].classList.toggle('active', this.#mods[m]);
      this.#modButtons[m].setAttribute('aria-pressed', String(this.#mods[m]));
    }
  }
}
