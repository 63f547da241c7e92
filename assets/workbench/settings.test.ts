import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  commandsToSkipShell,
  defaultTerminalSettings,
  fontSizeRange,
  onTerminalSettingsChange,
  reloadTerminalSettings,
  resetTerminalSettings,
  sanitizeTerminalSettings,
  scrollbackRange,
  terminalSettings,
  updateTerminalSettings,
  type TerminalSettings,
} from './settings';
import { CommandRegistry } from './commands';

test('commandsToSkipShell: the defaults, plus ids, minus -ids', () => {
  const defaults = ['workbench.palette', 'terminal.new', 'terminal.open'];
  const cases: { name: string; user: string[]; want: string[] }[] = [
    { name: 'no setting', user: [], want: defaults },
    { name: 'give Ctrl+P back to the shell', user: ['-terminal.open'], want: ['workbench.palette', 'terminal.new'] },
    { name: 'take Ctrl+B too', user: ['view.toggleSidebar'], want: [...defaults, 'view.toggleSidebar'] },
    { name: 'blanks ignored', user: [' ', ' -terminal.new '], want: ['workbench.palette', 'terminal.open'] },
  ];
  for (const c of cases) assert.deepEqual([...commandsToSkipShell(defaults, c.user)].sort(), [...c.want].sort(), c.name);
});

test('the default set holds Quick Open (Ctrl+P), the palette and New Terminal', () => {
  const r = new CommandRegistry();
  const noop = () => {};
  r.register({ id: 'terminal.open', category: 'Terminal', title: 'Open Terminal…', key: 'Ctrl+P', inTerminal: true, run: noop });
  r.register({ id: 'workbench.palette', category: 'View', title: 'Show All Commands', key: 'Ctrl+Shift+P or F1', inTerminal: true, run: noop });
  r.register({ id: 'view.toggleSidebar', category: 'View', title: 'Toggle', key: 'Ctrl+B', run: noop });
  assert.deepEqual(r.defaultSkipShell(), ['terminal.open', 'workbench.palette']);
});

/** A Map-backed localStorage for the settings functions under node. */
function fakeStorage(initial: Record<string, string> = {}): Map<string, string> {
  const m = new Map(Object.entries(initial));
  (globalThis as { localStorage?: unknown }).localStorage = {
    getItem: (k: string) => m.get(k) ?? null,
    setItem: (k: string, v: string) => void m.set(k, String(v)),
    removeItem: (k: string) => void m.delete(k),
  };
  return m;
}

test('sanitizeTerminalSettings: stored values made valid', () => {
  const d = defaultTerminalSettings;
  const cases: { name: string; raw: unknown; want: Partial<TerminalSettings> }[] = [
    { name: 'nothing stored', raw: undefined, want: {} },
    { name: 'not an object', raw: 'x', want: {} },
    { name: 'font size clamped up', raw: { fontSize: 2 }, want: { fontSize: fontSizeRange.min } },
    { name: 'font size clamped down', raw: { fontSize: 500 }, want: { fontSize: fontSizeRange.max } },
    { name: 'font size from a typed string, rounded', raw: { fontSize: '15.6' }, want: { fontSize: 16 } },
    { name: 'font size not a number', raw: { fontSize: 'big' }, want: {} },
    { name: 'blank font family', raw: { fontFamily: '  ' }, want: {} },
    { name: 'font family trimmed', raw: { fontFamily: ' Fira Code ' }, want: { fontFamily: 'Fira Code' } },
    { name: 'unknown cursor style', raw: { cursorStyle: 'beam' }, want: {} },
    { name: 'cursor style', raw: { cursorStyle: 'bar', cursorBlink: false }, want: { cursorStyle: 'bar', cursorBlink: false } },
    { name: 'blink not a boolean', raw: { cursorBlink: 'no' }, want: {} },
    { name: 'scrollback clamped', raw: { scrollback: 1e9 }, want: { scrollback: scrollbackRange.max } },
    { name: 'scrollback zero kept', raw: { scrollback: 0 }, want: { scrollback: 0 } },
    { name: 'renderer', raw: { renderer: 'webgl' }, want: { renderer: 'webgl' } },
    { name: 'unknown renderer', raw: { renderer: 'canvas' }, want: {} },
    { name: 'right click', raw: { rightClickBehavior: 'copyPaste' }, want: { rightClickBehavior: 'copyPaste' } },
    { name: 'unknown right click', raw: { rightClickBehavior: 'menu' }, want: {} },
    { name: 'screen reader and copy on selection', raw: { screenReaderMode: true, copyOnSelection: true }, want: { screenReaderMode: true, copyOnSelection: true } },
    { name: 'unknown keys dropped', raw: { theme: 'x' }, want: {} },
  ];
  for (const c of cases) {
    const got = sanitizeTerminalSettings(c.raw);
    assert.deepEqual(got, { ...d, ...c.want }, `${c.name}: sanitizeTerminalSettings(${JSON.stringify(c.raw)})`);
  }
});

test('terminal settings persist only what differs from the defaults, and tell listeners', () => {
  const stored = fakeStorage();
  const seen: TerminalSettings[] = [];
  const off = onTerminalSettingsChange((s) => seen.push(s));
  try {
    resetTerminalSettings();
    updateTerminalSettings({ fontSize: 18, cursorStyle: 'underline' });
    assert.deepEqual(JSON.parse(stored.get('termhost.terminal') ?? 'null'), { fontSize: 18, cursorStyle: 'underline' }, 'stored after update');
    assert.equal(terminalSettings().fontSize, 18, 'read back');
    updateTerminalSettings({ fontSize: defaultTerminalSettings.fontSize, cursorStyle: defaultTerminalSettings.cursorStyle });
    assert.equal(stored.has('termhost.terminal'), false, 'back to the defaults: nothing stored');
    assert.deepEqual(
      seen.map((s) => s.fontSize),
      [defaultTerminalSettings.fontSize, 18, defaultTerminalSettings.fontSize],
      'listener saw reset, update, update',
    );
  } finally {
    off();
  }
});

test('the old renderer key ("termhost.renderer" = "dom") still chooses the DOM, and a change replaces it', () => {
  const stored = fakeStorage({ 'termhost.renderer': 'dom' });
  reloadTerminalSettings(); // a fresh page: nothing cached
  assert.equal(terminalSettings().renderer, 'dom', 'legacy key read');
  updateTerminalSettings({ fontSize: 20 });
  assert.equal(stored.has('termhost.renderer'), false, 'legacy key replaced by the settings object');
  assert.deepEqual(JSON.parse(stored.get('termhost.terminal') ?? 'null'), { fontSize: 20, renderer: 'dom' });
});
