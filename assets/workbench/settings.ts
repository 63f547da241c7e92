// User settings kept in this browser's localStorage.

const osc52WriteKey = 'termhost.osc52Write';

/** "Allow programs to write the clipboard (OSC 52)": off unless the user turned it on. */
export function clipboardWriteAllowed(): boolean {
  try {
    return localStorage.getItem(osc52WriteKey) === 'on';
  } catch {
    return false; // storage blocked: keep the safe default
  }
}

export function setClipboardWriteAllowed(on: boolean): void {
  if (on) localStorage.setItem(osc52WriteKey, 'on');
  else localStorage.removeItem(osc52WriteKey);
}

/**
 * Tab moves the focus out of a terminal instead of reaching the shell
 * (VS Code's Toggle Tab Key Moves Focus, Ctrl+M): how a keyboard-only user
 * leaves a terminal by Tab. For this page only, as VS Code's default.
 */
let tabFocusMode = false;

export function tabMovesFocus(): boolean {
  return tabFocusMode;
}

export function setTabFocusMode(on: boolean): void {
  tabFocusMode = on;
}

const skipShellKey = 'termhost.commandsToSkipShell';
const startupKey = 'termhost.startupTerminal';

/**
 * The commands whose keys the workbench takes from a focused terminal
 * (VS Code's terminal.integrated.commandsToSkipShell): the defaults, plus
 * each "id" of the user's list, minus each "-id".
 */
export function commandsToSkipShell(defaults: readonly string[], user: readonly string[]): Set<string> {
  const out = new Set(defaults);
  for (const raw of user) {
    const id = raw.trim();
    if (id.startsWith('-')) out.delete(id.slice(1));
    else if (id) out.add(id);
  }
  return out;
}

/** The user's commandsToSkipShell list (["-terminal.open", "view.toggleSidebar"]), [] if unset. */
export function skipShellSetting(): string[] {
  try {
    const v = JSON.parse(localStorage.getItem(skipShellKey) ?? '[]') as unknown;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

export function setSkipShellSetting(ids: string[]): void {
  if (ids.length) localStorage.setItem(skipShellKey, JSON.stringify(ids));
  else localStorage.removeItem(skipShellKey);
}

/** Open a terminal, focused, when the owner's page loads and none is running (default on). */
export function startupTerminal(): boolean {
  try {
    return localStorage.getItem(startupKey) !== 'off';
  } catch {
    return true;
  }
}

export function setStartupTerminal(on: boolean): void {
  if (on) localStorage.removeItem(startupKey);
  else localStorage.setItem(startupKey, 'off');
}

// ---- terminal settings (VS Code's terminal.integrated.*), one JSON object ----

export type CursorStyle = 'block' | 'underline' | 'bar';
/** "auto": WebGL on a hardware GPU only (webglBudget.ts decides). */
export type RendererSetting = 'auto' | 'webgl' | 'dom';
/**
 * VS Code's terminal.integrated.rightClickBehavior. "default" is the
 * browser's menu (its Paste needs no permission); "paste" and "copyPaste"
 * read the clipboard, which the browser asks the user to allow once.
 */
export type RightClickBehavior = 'default' | 'selectWord' | 'copyPaste' | 'paste' | 'nothing';

export interface TerminalSettings {
  fontSize: number;
  fontFamily: string;
  cursorStyle: CursorStyle;
  cursorBlink: boolean;
  /** Lines xterm keeps above the screen (this browser's copy; the server keeps its own). */
  scrollback: number;
  renderer: RendererSetting;
  copyOnSelection: boolean;
  rightClickBehavior: RightClickBehavior;
  screenReaderMode: boolean;
}

export const defaultTerminalSettings: Readonly<TerminalSettings> = Object.freeze({
  fontSize: 14,
  fontFamily: "'Droid Sans Mono', 'DejaVu Sans Mono', Menlo, Monaco, Consolas, 'Liberation Mono', 'Courier New', monospace",
  cursorStyle: 'block',
  cursorBlink: true,
  scrollback: 10000,
  renderer: 'auto',
  copyOnSelection: false,
  rightClickBehavior: 'selectWord',
  screenReaderMode: false,
});

export const cursorStyles: readonly CursorStyle[] = ['block', 'underline', 'bar'];
export const rendererSettings: readonly RendererSetting[] = ['auto', 'webgl', 'dom'];
export const rightClickBehaviors: readonly RightClickBehavior[] = ['default', 'selectWord', 'copyPaste', 'paste', 'nothing'];
export const fontSizeRange = { min: 6, max: 72 } as const;
/** Past ~100k lines a busy terminal holds hundreds of MB in the tab. */
export const scrollbackRange = { min: 0, max: 100_000 } as const;

const terminalKey = 'termhost.terminal';
/** Before the settings object: "dom" here chose the DOM renderer. */
const legacyRendererKey = 'termhost.renderer';

function clampInt(v: unknown, range: { min: number; max: number }, fallback: number): number {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) ? Math.min(range.max, Math.max(range.min, Math.round(n))) : fallback;
}

function oneOf<T extends string>(v: unknown, allowed: readonly T[], fallback: T): T {
  return allowed.includes(v as T) ? (v as T) : fallback;
}

/** Stored (or typed) values made valid: unknown keys dropped, numbers clamped, anything else the default. */
export function sanitizeTerminalSettings(raw: unknown): TerminalSettings {
  const r = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  const d = defaultTerminalSettings;
  const family = typeof r.fontFamily === 'string' ? r.fontFamily.trim().slice(0, 300) : '';
  return {
    fontSize: clampInt(r.fontSize, fontSizeRange, d.fontSize),
    fontFamily: family || d.fontFamily,
    cursorStyle: oneOf(r.cursorStyle, cursorStyles, d.cursorStyle),
    cursorBlink: typeof r.cursorBlink === 'boolean' ? r.cursorBlink : d.cursorBlink,
    scrollback: clampInt(r.scrollback, scrollbackRange, d.scrollback),
    renderer: oneOf(r.renderer, rendererSettings, d.renderer),
    copyOnSelection: typeof r.copyOnSelection === 'boolean' ? r.copyOnSelection : d.copyOnSelection,
    rightClickBehavior: oneOf(r.rightClickBehavior, rightClickBehaviors, d.rightClickBehavior),
    screenReaderMode: typeof r.screenReaderMode === 'boolean' ? r.screenReaderMode : d.screenReaderMode,
  };
}

/** Only the values that differ from the defaults: a later default change reaches users who never touched it. */
export function changedFromDefaults(s: TerminalSettings): Partial<TerminalSettings> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) if (v !== defaultTerminalSettings[k as keyof TerminalSettings]) out[k] = v;
  return out as Partial<TerminalSettings>;
}

/** The settings as last read or set: read often (every selection with copy on selection). */
let current: TerminalSettings | undefined;

/** This browser's terminal settings (the defaults if none or storage is blocked). */
export function terminalSettings(): TerminalSettings {
  current ??= readTerminalSettings();
  return { ...current };
}

function readTerminalSettings(): TerminalSettings {
  try {
    const stored = JSON.parse(localStorage.getItem(terminalKey) ?? '{}') as Record<string, unknown>;
    if (stored.renderer === undefined && localStorage.getItem(legacyRendererKey) === 'dom') stored.renderer = 'dom';
    return sanitizeTerminalSettings(stored);
  } catch {
    return { ...defaultTerminalSettings };
  }
}

type SettingsListener = (s: TerminalSettings) => void;
const listeners = new Set<SettingsListener>();
let watchingOtherTabs = false;

/** Runs `fn` after every change, from this tab or another one; returns the unsubscribe. */
export function onTerminalSettingsChange(fn: SettingsListener): () => void {
  listeners.add(fn);
  if (!watchingOtherTabs && typeof window !== 'undefined') {
    watchingOtherTabs = true;
    window.addEventListener('storage', (e) => {
      if (e.key === terminalKey || e.key === null) reloadTerminalSettings();
    });
  }
  return () => listeners.delete(fn);
}

/** Read the stored settings again (another tab changed them) and tell the listeners. */
export function reloadTerminalSettings(): void {
  current = undefined;
  emit();
}

function emit(): void {
  const s = terminalSettings();
  for (const fn of [...listeners]) fn(s);
}

/** Change some settings (sanitized), store them and tell the open terminals. */
export function updateTerminalSettings(patch: Partial<TerminalSettings>): TerminalSettings {
  const next = sanitizeTerminalSettings({ ...terminalSettings(), ...patch });
  const changed = changedFromDefaults(next);
  current = next;
  try {
    if (Object.keys(changed).length) localStorage.setItem(terminalKey, JSON.stringify(changed));
    else localStorage.removeItem(terminalKey);
    localStorage.removeItem(legacyRendererKey);
  } catch {
    /* storage blocked: the change holds for this page only */
  }
  emit();
  return next;
}

/** Back to the defaults (the Settings editor's Reset). */
export function resetTerminalSettings(): TerminalSettings {
  current = { ...defaultTerminalSettings };
  try {
    localStorage.removeItem(terminalKey);
    localStorage.removeItem(legacyRendererKey);
  } catch {
    /* nothing stored */
  }
  emit();
  return terminalSettings();
}
