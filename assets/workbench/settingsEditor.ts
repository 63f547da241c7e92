// The Settings editor (Preferences: Open Settings, the activity bar's gear):
// one modal dialog of labelled controls, each change applied at once to every
// open terminal and kept in this browser (settings.ts). Keyboard operable:
// Tab stays inside, Escape and Done close it and give the focus back.

import { h, overlayClosed, dialogKeys } from './dom';
import {
  clipboardWriteAllowed,
  cursorStyles,
  fontSizeRange,
  rendererSettings,
  resetTerminalSettings,
  rightClickBehaviors,
  scrollbackRange,
  setClipboardWriteAllowed,
  setStartupTerminal,
  startupTerminal,
  terminalSettings,
  updateTerminalSettings,
  type TerminalSettings,
} from './settings';
import { setScreenReaderMode } from './preferences';

export interface SettingsEditorHost {
  /** The active terminal's renderer and why ("DOM — software GPU detected"), if one is open. */
  activeRenderer(): string | undefined;
  /** Only the owner's page opens a terminal by itself. */
  isOwner: boolean;
}

const choiceLabels: Record<string, string> = {
  block: 'Block',
  underline: 'Underline',
  bar: 'Bar',
  auto: 'Auto',
  webgl: 'WebGL',
  dom: 'DOM',
  default: 'Browser menu',
  selectWord: 'Select word, then menu',
  copyPaste: 'Copy selection, or paste',
  paste: 'Paste',
  nothing: 'Nothing',
};

export type SettingId = keyof TerminalSettings | 'osc52Write' | 'startupTerminal';

let openEditor: HTMLElement | undefined;

/** Opens the Settings editor, focusing `focus`'s control; resolves when it closes. */
export function openSettingsEditor(host: SettingsEditorHost, focus?: SettingId): Promise<void> {
  if (openEditor?.isConnected) {
    controlOf(openEditor, focus)?.focus();
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    const restore = document.activeElement as HTMLElement | null;
    const rendererNote = h('span#setting-renderer-active');
    const showRenderer = () => {
      const r = host.activeRenderer();
      rendererNote.textContent = r ? ` The active terminal uses: ${r}.` : '';
    };
    const form = h('div.settings-list');
    const render = () => {
      form.replaceChildren(...rows(host, showRenderer, rendererNote));
      showRenderer();
    };
    const close = () => {
      overlay.remove();
      openEditor = undefined;
      document.removeEventListener('keydown', onKey, true);
      if (restore?.isConnected) restore.focus();
      resolve();
      overlayClosed();
    };
    const reset = h('button.button.secondary#settings-reset', { type: 'button' }, 'Reset to Defaults');
    reset.addEventListener('click', () => {
      resetTerminalSettings();
      render();
      reset.focus();
    });
    const done = h('button.button.primary#settings-done', { type: 'button', onclick: close }, 'Done');
    const box = h(
      'div.dialog-box.settings-dialog#settings-dialog',
      { role: 'dialog', 'aria-modal': 'true', 'aria-labelledby': 'settings-title' },
      h('div.dialog-message#settings-title', null, 'Settings'),
      h('div.dialog-detail', null, 'Kept in this browser. Changes apply at once to every open terminal.'),
      form,
      h('div.dialog-buttons', null, reset, done),
    );
    const overlay = h('div.dialog-overlay', null, box);
    overlay.addEventListener('mousedown', (e) => e.target === overlay && close());
    const onKey = dialogKeys(box, close);
    document.addEventListener('keydown', onKey, true);
    render();
    document.body.append(overlay);
    openEditor = box;
    (controlOf(box, focus) ?? controlOf(box, 'fontSize'))?.focus();
  });
}

function controlOf(box: HTMLElement, id: SettingId | undefined): HTMLElement | null {
  return id ? box.querySelector<HTMLElement>(`#setting-${id}`) : null;
}

/** Keep Tab inside the dialog (never in a terminal behind it). */
function rows(host: SettingsEditorHost, rendererChanged: () => void, rendererNote: HTMLElement): HTMLElement[] {
  const s = terminalSettings();
  const set = (patch: Partial<TerminalSettings>) => updateTerminalSettings(patch);
  return [
    h('h2.settings-group', null, 'Terminal'),
    numberRow('fontSize', 'Font Size', 'The font size of the terminals, in pixels.', s.fontSize, fontSizeRange, (v) => set({ fontSize: v }).fontSize),
    textRow('fontFamily', 'Font Family', 'The font family of the terminals, as in CSS (a list of fonts, the first installed one wins).', s.fontFamily, (v) => set({ fontFamily: v }).fontFamily),
    selectRow('cursorStyle', 'Cursor Style', 'The cursor’s shape while the terminal has focus.', s.cursorStyle, cursorStyles, (v) => set({ cursorStyle: v })),
    checkRow('cursorBlink', 'Cursor Blinking', 'The cursor blinks while the terminal has focus.', s.cursorBlink, (v) => set({ cursorBlink: v })),
    numberRow('scrollback', 'Scrollback', 'Lines this browser keeps above the screen of each terminal.', s.scrollback, scrollbackRange, (v) => set({ scrollback: v }).scrollback),
    selectRow('renderer', 'Renderer (GPU Acceleration)', 'WebGL draws with the GPU. Auto uses it on a hardware GPU only: on one emulated in software the DOM renderer shows content sooner.', s.renderer, rendererSettings, (v) => {
      set({ renderer: v });
      rendererChanged();
    }, rendererNote),
    checkRow('copyOnSelection', 'Copy on Selection', 'Selecting text in a terminal copies it to the clipboard.', s.copyOnSelection, (v) => set({ copyOnSelection: v })),
    selectRow('rightClickBehavior', 'Right Click Behavior', 'What right clicking a terminal does. The browser’s menu can always paste; pasting directly needs its permission to read the clipboard, asked once.', s.rightClickBehavior, rightClickBehaviors, (v) => set({ rightClickBehavior: v })),
    h('h2.settings-group', null, 'Accessibility'),
    checkRow('screenReaderMode', 'Screen Reader Mode', 'Lets screen readers read the terminal’s rows (xterm.js’s accessibility mode). Also: Toggle Screen Reader Accessibility Mode (Shift+Alt+F1).', s.screenReaderMode, setScreenReaderMode),
    h('h2.settings-group', null, 'Clipboard and Startup'),
    checkRow('osc52Write', 'Allow Programs to Write the Clipboard (OSC 52)', 'Programs in a terminal may set the clipboard while this tab has focus. They can never read it.', clipboardWriteAllowed(), setClipboardWriteAllowed),
    host.isOwner ? checkRow('startupTerminal', 'Open a Terminal When None Is Running', 'Loading the page with no terminal running opens one, focused.', startupTerminal(), setStartupTerminal) : null,
  ].filter((r): r is HTMLElement => r !== null);
}

/** One setting: its label (for the control), description and control. */
function row(id: SettingId, label: string, description: string, control: HTMLElement, extra?: HTMLElement): HTMLElement {
  control.id = `setting-${id}`;
  control.setAttribute('aria-describedby', `setting-${id}-description`);
  return h(
    'div.setting-row',
    { 'data-setting': id },
    h('label.setting-label', { for: control.id }, label),
    h('div.setting-description', { id: `setting-${id}-description` }, description, extra ?? null),
    control,
  );
}

function numberRow(id: SettingId, label: string, description: string, value: number, range: { min: number; max: number }, apply: (v: number) => number): HTMLElement {
  const input = h('input.settings-input.settings-number', { type: 'number', min: range.min, max: range.max, step: 1, value });
  // On change (Enter or leaving the field), not per keystroke: "1" on the way to "14" would resize every terminal.
  input.addEventListener('change', () => (input.value = String(apply(Number(input.value)))));
  return row(id, label, description, input);
}

function textRow(id: SettingId, label: string, description: string, value: string, apply: (v: string) => string): HTMLElement {
  const input = h('input.settings-input', { type: 'text', spellcheck: 'false', value });
  input.addEventListener('change', () => (input.value = apply(input.value)));
  return row(id, label, description, input);
}

function selectRow<T extends string>(id: SettingId, label: string, description: string, value: T, choices: readonly T[], apply: (v: T) => void, extra?: HTMLElement): HTMLElement {
  const select = h('select.select-box.settings-select');
  for (const c of choices) select.append(h('option', { value: c }, choiceLabels[c] ?? c));
  select.value = value;
  select.addEventListener('change', () => apply(select.value as T));
  return row(id, label, description, select, extra);
}

function checkRow(id: SettingId, label: string, description: string, value: boolean, apply: (v: boolean) => void): HTMLElement {
  const box = h('input.settings-checkbox', { type: 'checkbox' });
  box.checked = value;
  box.addEventListener('change', () => apply(box.checked));
  return row(id, label, description, box);
}
