// Replays the official AHP reducer fixtures (pinned in
// ahp/upstream/fixtures/reducers/) in the legacy (≤0.8) shape as they
// are, and adapted to the 0.9.0+ shape as ahp/upstream/README.md
// explains, plus our own edge-case table. Each run also
// checks that neither the initial state nor the actions were modified.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ChannelMirror } from './mirror';
import { contentText, rootReducer, terminalReducer, type Shape } from './reducers';
import type { RootState, StateAction, TerminalState, WireAction } from './types';

interface Fixture {
  description: string;
  reducer: string;
  initial: Record<string, unknown>;
  actions: WireAction[];
  expected: Record<string, unknown>;
}

const repoRoot = process.env.TERMHOST_REPO_ROOT ?? process.cwd();
const fixtureDir = path.resolve(repoRoot, 'ahp/upstream/fixtures/reducers');

/** JSON null is treated as an absent key, as the upstream harnesses do. */
function stripNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripNulls);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== null) out[k] = stripNulls(x);
    return out;
  }
  return v;
}

function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object') {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

// ---- adaptation to the 0.9.0+ shape (ahp/upstream/README.md) ----

/** `exitCode: N` → `lifecycle: {status:"exited", exitCode:N}`; else running. */
function adaptLifecycle(s: Record<string, unknown>): Record<string, unknown> {
  const out = { ...s };
  if ('exitCode' in out && out.exitCode !== undefined) {
    out.lifecycle = { status: 'exited', exitCode: out.exitCode };
    delete out.exitCode;
  } else if (!('lifecycle' in out)) {
    out.lifecycle = { status: 'running' };
  }
  return out;
}

/** Session claims gained a required `chat` URI in 0.9.0; reducers treat it as opaque data. */
function adaptClaim(c: unknown): unknown {
  if (c && typeof c === 'object' && (c as { kind?: string }).kind === 'session' && !('chat' in c)) {
    return { ...c, chat: 'copilot:/s1/chat' };
  }
  return c;
}

function adaptTerminalState(s: Record<string, unknown>): Record<string, unknown> {
  const out = adaptLifecycle(s);
  if ('claim' in out) out.claim = adaptClaim(out.claim);
  return out;
}

function adaptTerminalInfos(list: unknown): unknown {
  if (!Array.isArray(list)) return list;
  return list.map((t) => {
    const out = adaptLifecycle(t as Record<string, unknown>);
    out.claim = adaptClaim(out.claim);
    return out;
  });
}

function adaptRootState(s: Record<string, unknown>): Record<string, unknown> {
  const out = { ...s };
  if ('terminals' in out) out.terminals = adaptTerminalInfos(out.terminals);
  return out;
}

function adaptAction(a: WireAction): WireAction {
  const x: { type: string; [field: string]: unknown } = { ...a };
  if (x.type === 'terminal/claimed') x.claim = adaptClaim(x.claim);
  if (x.type === 'root/terminalsChanged') x.terminals = adaptTerminalInfos(x.terminals);
  return x;
}

function adapt(f: Fixture): Fixture {
  if (f.reducer === 'terminal') {
    return {
      ...f,
      initial: adaptTerminalState(f.initial),
      actions: f.actions.map(adaptAction),
      expected: adaptTerminalState(f.expected),
    };
  }
  return {
    ...f,
    initial: adaptRootState(f.initial),
    actions: f.actions.map(adaptAction),
    expected: adaptRootState(f.expected),
  };
}

function run(f: Fixture, shape: Shape): unknown {
  const initial = deepFreeze(stripNulls(f.initial)) as Record<string, unknown>;
  const actions = deepFreeze(stripNulls(f.actions)) as WireAction[];
  const initialCopy = structuredClone(initial);
  const actionsCopy = structuredClone(actions);
  let state: unknown = initial;
  for (const a of actions) {
    if (f.reducer === 'root') state = rootReducer(state as RootState, a);
    else if (f.reducer === 'terminal') state = terminalReducer(state as TerminalState, a, shape);
    else throw new Error(`unknown reducer ${JSON.stringify(f.reducer)}`);
  }
  assert.deepEqual(initial, initialCopy, 'initial state was modified');
  assert.deepEqual(actions, actionsCopy, 'actions were modified');
  return state;
}

function loadFixtures(): { name: string; f: Fixture }[] {
  if (!existsSync(fixtureDir)) {
    throw new Error(`reducer fixtures not found at ${fixtureDir} (the pinned copies in ahp/upstream; see its README)`);
  }
  const names = readdirSync(fixtureDir).filter((n) => n.endsWith('.json')).sort();
  if (names.length === 0) throw new Error(`no fixtures in ${fixtureDir}`);
  return names.map((name) => ({ name, f: JSON.parse(readFileSync(path.join(fixtureDir, name), 'utf8')) as Fixture }));
}

const fixtures = loadFixtures();

describe('official reducer fixtures, legacy shape (≤0.8)', () => {
  for (const { name, f } of fixtures) {
    test(`${name}: ${f.description}`, () => {
      const got = run(f, 'legacy');
      assert.deepEqual(stripNulls(got), stripNulls(f.expected), `${f.reducer}Reducer(${name}) legacy`);
    });
  }
});

describe('official reducer fixtures, adapted to the 0.9.0+ shape', () => {
  for (const { name, f } of fixtures) {
    test(`${name}: ${f.description}`, () => {
      const g = adapt(f);
      const got = run(g, 'current');
      assert.deepEqual(stripNulls(got), stripNulls(g.expected), `${f.reducer}Reducer(${name}) current`);
    });
  }
});

// The browser's mirror reduces a terminal's content in place in a bounded
// store (mirror.ts, content.ts): it must still give the fixtures' states.
describe('official terminal fixtures through ChannelMirror (0.9.0+ shape)', () => {
  for (const { name, f } of fixtures.filter(({ f }) => f.reducer === 'terminal')) {
    test(`${name}: ${f.description}`, () => {
      const g = adapt(f);
      const initial = deepFreeze(stripNulls(g.initial)) as TerminalState;
      const m = new ChannelMirror<TerminalState>('ahp-terminal:/fixture', initial, 0);
      g.actions.forEach((a, i) => m.receive({ channel: m.channel, action: stripNulls(a) as WireAction, serverSeq: i + 1 }, 'me'));
      assert.deepEqual(stripNulls(structuredClone(m.confirmed)), stripNulls(g.expected), `mirror(${name})`);
    });
  }
});

test('fixture set covers both reducers', () => {
  assert.ok(fixtures.some(({ f }) => f.reducer === 'root'));
  assert.ok(fixtures.some(({ f }) => f.reducer === 'terminal'));
});

// ---- our own edge cases of the terminal reducer ----

const base = (): TerminalState => ({
  title: 't',
  content: [],
  lifecycle: { status: 'running' },
  claim: { kind: 'client', clientId: 'c' },
});

describe('terminalReducer edge cases', () => {
  const cases: { name: string; state: TerminalState; actions: StateAction[]; want: TerminalState }[] = [
    {
      name: 'empty data on empty content appends an empty unclassified part',
      state: base(),
      actions: [{ type: 'terminal/data', data: '' }],
      want: { ...base(), content: [{ type: 'unclassified', value: '' }] },
    },
    {
      name: 'exited without code',
      state: base(),
      actions: [{ type: 'terminal/exited' }],
      want: { ...base(), lifecycle: { status: 'exited' } },
    },
    {
      name: 'exited with code',
      state: base(),
      actions: [{ type: 'terminal/exited', exitCode: 3 }],
      want: { ...base(), lifecycle: { status: 'exited', exitCode: 3 } },
    },
    {
      name: 'commandFinished without exitCode clears an old one',
      state: {
        ...base(),
        content: [{ type: 'command', commandId: 'a', commandLine: 'x', output: '', timestamp: 1, isComplete: true, exitCode: 1, durationMs: 4 }],
      },
      actions: [{ type: 'terminal/commandFinished', commandId: 'a' }],
      want: {
        ...base(),
        content: [{ type: 'command', commandId: 'a', commandLine: 'x', output: '', timestamp: 1, isComplete: true }],
      },
    },
    {
      name: 'second commandExecuted appends even if the first is incomplete; data goes to the tail',
      state: base(),
      actions: [
        { type: 'terminal/commandExecuted', commandId: 'a', commandLine: 'x', timestamp: 1 },
        { type: 'terminal/commandExecuted', commandId: 'b', commandLine: 'y', timestamp: 2 },
        { type: 'terminal/data', data: 'out' },
      ],
      want: {
        ...base(),
        supportsCommandDetection: true,
        content: [
          { type: 'command', commandId: 'a', commandLine: 'x', output: '', timestamp: 1, isComplete: false },
          { type: 'command', commandId: 'b', commandLine: 'y', output: 'out', timestamp: 2, isComplete: false },
        ],
      },
    },
    {
      // A server's extension on the action (termhost's agent mark) is not
      // state: every client, termhost's or not, reduces to the same part.
      name: 'commandExecuted with a _meta appends the same part as without',
      state: base(),
      actions: [{ type: 'terminal/commandExecuted', commandId: 'a', commandLine: 'make', timestamp: 1, _meta: { 'termhost/runBy': { kind: 'agent', name: 'Agent' } } }],
      want: {
        ...base(),
        supportsCommandDetection: true,
        content: [{ type: 'command', commandId: 'a', commandLine: 'make', output: '', timestamp: 1, isComplete: false }],
      },
    },
    {
      name: 'cleared keeps supportsCommandDetection',
      state: { ...base(), supportsCommandDetection: true, content: [{ type: 'unclassified', value: 'x' }] },
      actions: [{ type: 'terminal/cleared' }],
      want: { ...base(), supportsCommandDetection: true, content: [] },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const initial = deepFreeze(structuredClone(c.state));
      let s = initial;
      for (const a of c.actions) s = terminalReducer(s, a);
      assert.deepEqual(s, c.want);
    });
  }

  test("the mirror keeps a commandExecuted's _meta beside the state, from the action or the snapshot's _meta, while it keeps the command", () => {
    const mark = { 'termhost/runBy': { kind: 'agent', name: 'Agent' } };
    const snap: TerminalState = {
      ...base(),
      content: [{ type: 'command', commandId: 'old', commandLine: 'make', output: 'x', timestamp: 1, isComplete: true }],
    };
    const m = new ChannelMirror<TerminalState>('ahp-terminal:/m', deepFreeze(structuredClone(snap)), 1, 64);
    m.setSnapshotMeta({ 'termhost/commandMeta': { old: mark, gone: mark } });
    assert.deepEqual(m.commandMeta('old'), mark);
    assert.equal(m.commandMeta('gone'), undefined, 'a command the content does not hold');
    m.receive({ channel: m.channel, action: { type: 'terminal/commandExecuted', commandId: 'new', commandLine: 'ls', timestamp: 2, _meta: mark }, serverSeq: 2 }, 'me');
    assert.deepEqual(m.commandMeta('new'), mark);
    assert.ok(m.confirmed.content.every((p) => !('_meta' in p)), 'no _meta in the parts');
    // The state is the official reducer's.
    assert.deepEqual(structuredClone(m.confirmed), terminalReducer(snap, { type: 'terminal/commandExecuted', commandId: 'new', commandLine: 'ls', timestamp: 2, _meta: mark }));
    m.receive({ channel: m.channel, action: { type: 'terminal/data', data: 'y'.repeat(100) }, serverSeq: 3 }, 'me');
    assert.equal(m.commandMeta('old'), undefined, 'trimmed away with its command');
    m.receive({ channel: m.channel, action: { type: 'terminal/cleared' }, serverSeq: 4 }, 'me');
    assert.equal(m.commandMeta('new'), undefined, 'cleared with the content');
    m.reset(deepFreeze(structuredClone(snap)), 5, { 'termhost/commandMeta': { old: mark } });
    assert.deepEqual(m.commandMeta('old'), mark);
  });

  test('unknown action and unmatched commandFinished return the same object', () => {
    const s = deepFreeze(base());
    assert.equal(terminalReducer(s, { type: 'terminal/x-unknown' }), s);
    assert.equal(terminalReducer(s, { type: 'terminal/commandFinished', commandId: 'nope', exitCode: 1 }), s);
    assert.equal(terminalReducer(s, { type: 'terminal/input', data: 'ls\r' }), s);
    const r: RootState = deepFreeze({ agents: [] });
    assert.equal(rootReducer(r, { type: 'root/x-unknown' }), r);
  });

  test('contentText concatenates value and output in order', () => {
    const s: TerminalState = {
      ...base(),
      content: [
        { type: 'unclassified', value: '$ ' },
        { type: 'command', commandId: 'a', commandLine: 'echo hi', output: 'hi\r\n', timestamp: 1, isComplete: true, exitCode: 0 },
        { type: 'unclassified', value: '$ ' },
      ],
    };
    assert.equal(contentText(s.content), '$ hi\r\n$ ');
  });
});
