import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Action } from './commands';
import { matchRank, noteCommandRun, orderCommands, OTHER_GROUP, RECENT_GROUP, recentCommands } from './paletteOrder';

const noop = () => undefined;
const actions: Action[] = [
  { id: 'account.signOut', category: 'Account', title: 'Sign Out', destructive: true, run: noop },
  { id: 'terminal.kill', category: 'Terminal', title: 'Kill the Active Terminal', destructive: true, run: noop },
  { id: 'help.about', category: 'Help', title: 'About', run: noop },
  { id: 'terminal.new', category: 'Terminal', title: 'Create New Terminal', run: noop },
  { id: 'theme.pick', category: 'Preferences', title: 'Color Theme', run: noop },
];

function memoryStore(): { getItem(k: string): string | null; setItem(k: string, v: string): void } {
  const m = new Map<string, string>();
  return { getItem: (k) => m.get(k) ?? null, setItem: (k, v) => void m.set(k, v) };
}

test('orderCommands: no history puts destructive commands last, the rest A–Z', () => {
  const got = orderCommands(actions, []).map((x) => x.action.id);
  assert.deepEqual(got, ['help.about', 'theme.pick', 'terminal.new', 'account.signOut', 'terminal.kill']);
  assert.notEqual(got[0], 'account.signOut', 'the pre-selected entry must not sign out');
});

test('orderCommands: recently used first, newest first, then the others', () => {
  const got = orderCommands(actions, ['theme.pick', 'terminal.new', 'gone.command']);
  assert.deepEqual(
    got.map((x) => [x.action.id, x.group]),
    [
      ['theme.pick', RECENT_GROUP],
      ['terminal.new', RECENT_GROUP],
      ['help.about', OTHER_GROUP],
      ['account.signOut', OTHER_GROUP],
      ['terminal.kill', OTHER_GROUP],
    ],
  );
});

test('orderCommands: a destructive command in the history stays last', () => {
  const got = orderCommands(actions, ['account.signOut']).map((x) => x.action.id);
  assert.equal(got[0], 'help.about');
  assert.deepEqual(got.slice(-2), ['account.signOut', 'terminal.kill']);
});

test('noteCommandRun keeps the newest first, once each, and never a destructive command', () => {
  const store = memoryStore();
  noteCommandRun(actions[2]!, store); // about
  noteCommandRun(actions[4]!, store); // theme
  noteCommandRun(actions[2]!, store); // about again
  noteCommandRun(actions[0]!, store); // sign out: not remembered
  assert.deepEqual(recentCommands(store), ['help.about', 'theme.pick']);
});

test('recentCommands survives bad storage', () => {
  const store = memoryStore();
  store.setItem('termhost.palette.recent', '{not json');
  assert.deepEqual(recentCommands(store), []);
  assert.deepEqual(recentCommands(undefined), []);
});

test('matchRank: word start before inside a word before scattered words', () => {
  const cases: [string, string, number | undefined][] = [
    ['sign', 'Account: Sign Out', 0],
    ['acc', 'Account: Sign Out', 0],
    ['ign', 'Account: Sign Out', 1],
    ['acc out', 'Account: Sign Out', 2],
    ['xyz', 'Account: Sign Out', undefined],
  ];
  for (const [q, label, want] of cases) assert.equal(matchRank(q, label), want, `matchRank(${q}, ${label})`);
});
