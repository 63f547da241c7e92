import { test } from 'node:test';
import assert from 'node:assert/strict';
import { controlChar, keyBytes, modifyTyped, type Modifiers } from './keyRow';

const none: Modifiers = { ctrl: false, alt: false };
const ctrl: Modifiers = { ctrl: true, alt: false };
const alt: Modifiers = { ctrl: false, alt: true };
const both: Modifiers = { ctrl: true, alt: true };

test('keyBytes', async (t) => {
  const cases: { name: string; key: string; mods: Modifiers; appCursor: boolean; want: string }[] = [
    { name: 'Esc', key: 'Escape', mods: none, appCursor: false, want: '\x1b' },
    { name: 'Alt+Esc', key: 'Escape', mods: alt, appCursor: false, want: '\x1b\x1b' },
    { name: 'Tab', key: 'Tab', mods: none, appCursor: false, want: '\t' },
    { name: 'Up, normal cursor mode', key: 'ArrowUp', mods: none, appCursor: false, want: '\x1b[A' },
    { name: 'Up, application cursor mode', key: 'ArrowUp', mods: none, appCursor: true, want: '\x1bOA' },
    { name: 'Down, normal', key: 'ArrowDown', mods: none, appCursor: false, want: '\x1b[B' },
    { name: 'Right, application', key: 'ArrowRight', mods: none, appCursor: true, want: '\x1bOC' },
    { name: 'Left, normal', key: 'ArrowLeft', mods: none, appCursor: false, want: '\x1b[D' },
    { name: 'Ctrl+Left (word left)', key: 'ArrowLeft', mods: ctrl, appCursor: true, want: '\x1b[1;5D' },
    { name: 'Alt+Right', key: 'ArrowRight', mods: alt, appCursor: false, want: '\x1b[1;3C' },
    { name: 'Ctrl+Alt+Up', key: 'ArrowUp', mods: both, appCursor: false, want: '\x1b[1;7A' },
    { name: 'symbol', key: '|', mods: none, appCursor: false, want: '|' },
    { name: 'Ctrl+c', key: 'c', mods: ctrl, appCursor: false, want: '\x03' },
    { name: 'Alt+b', key: 'b', mods: alt, appCursor: false, want: '\x1bb' },
    { name: 'Ctrl+Alt+d', key: 'd', mods: both, appCursor: false, want: '\x1b\x04' },
    { name: 'Ctrl+/', key: '/', mods: ctrl, appCursor: false, want: '\x1f' },
  ];
  for (const c of cases) {
    await t.test(c.name, () => assert.equal(keyBytes(c.key, c.mods, c.appCursor), c.want, `keyBytes(${JSON.stringify(c.key)}, ${JSON.stringify(c.mods)}, ${c.appCursor})`));
  }
});

test('controlChar', async (t) => {
  const cases: [string, string][] = [
    ['a', '\x01'],
    ['C', '\x03'],
    ['z', '\x1a'],
    ['@', '\x00'],
    [' ', '\x00'],
    ['[', '\x1b'],
    ['\\', '\x1c'],
    [']', '\x1d'],
    ['^', '\x1e'],
    ['_', '\x1f'],
    ['3', '\x1b'],
    ['7', '\x1f'],
    ['8', '\x7f'],
    ['?', '\x7f'],
    ['-', '\x1f'],
    ['~', '~'],
    ['é', 'é'],
  ];
  for (const [c, want] of cases) {
    await t.test(JSON.stringify(c), () => assert.equal(controlChar(c), want, `controlChar(${JSON.stringify(c)})`));
  }
});

test('modifyTyped', async (t) => {
  const cases: { name: string; data: string; mods: Modifiers; want: string | undefined }[] = [
    { name: 'Ctrl + typed c', data: 'c', mods: ctrl, want: '\x03' },
    { name: 'Alt + typed x', data: 'x', mods: alt, want: '\x1bx' },
    { name: 'Ctrl + a wide character stays', data: '日', mods: ctrl, want: '日' },
    { name: 'Ctrl + hardware Up (application mode)', data: '\x1bOA', mods: ctrl, want: '\x1b[1;5A' },
    { name: 'Alt + hardware Left', data: '\x1b[D', mods: alt, want: '\x1b[1;3D' },
    { name: 'Alt + Esc', data: '\x1b', mods: alt, want: '\x1b\x1b' },
    { name: 'a paste is not a key', data: 'ls -l', mods: ctrl, want: undefined },
    { name: 'a query answer is not a key', data: '\x1b[?1;2c', mods: ctrl, want: undefined },
    { name: 'a focus report is not a key', data: '\x1b[I', mods: ctrl, want: undefined },
    { name: 'Enter is not modified', data: '\r', mods: ctrl, want: undefined },
  ];
  for (const c of cases) {
    await t.test(c.name, () => assert.equal(modifyTyped(c.data, c.mods), c.want, `modifyTyped(${JSON.stringify(c.data)}, ${JSON.stringify(c.mods)})`));
  }
});
