// The browser mirror's bounded content (content.ts, mirror.ts): it reduces
// as terminalReducer does while under budget, trims as the server does
// (ahp/content) when over it, keeps command metadata only for the
// parts it keeps, and costs O(frame) per output frame however many commands
// it holds.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ContentStore, DEFAULT_CONTENT_BUDGET, safeCut, utf8Length } from './content';
import { ChannelMirror } from './mirror';
import { contentText, terminalReducer } from './reducers';
import type { StateAction, TerminalCommandPart, TerminalContentPart, TerminalState } from './types';

const T = 'ahp-terminal:/t1';

const base = (content: TerminalState['content'] = []): TerminalState => ({
  title: 't',
  content,
  lifecycle: { status: 'running' },
  claim: { kind: 'client', clientId: 'c' },
});

/** A mirror fed `actions` as server envelopes. */
function mirrorOf(actions: StateAction[], budget?: number, state = base()): ChannelMirror<TerminalState> {
  const m = new ChannelMirror<TerminalState>(T, state, 0, budget);
  for (const a of actions) feed(m, a);
  return m;
}

function feed(m: ChannelMirror<TerminalState>, a: StateAction): void {
  m.receive({ channel: T, action: a, serverSeq: m.seq + 1 }, 'me');
}

const data = (d: string): StateAction => ({ type: 'terminal/data', data: d });
const exec = (id: string): StateAction => ({ type: 'terminal/commandExecuted', commandId: id, commandLine: `run ${id}`, timestamp: 1 });
const fin = (id: string, exitCode?: number): StateAction => ({ type: 'terminal/commandFinished', commandId: id, exitCode, durationMs: 2 });

describe('mirror content under budget equals terminalReducer', () => {
  const cases: { name: string; initial?: TerminalState; actions: StateAction[] }[] = [
    { name: 'data appends to one unclassified part', actions: [data('a'), data('b\n'), data('c')] },
    { name: 'command lifecycle', actions: [data('$ '), exec('1'), data('out\n'), fin('1', 0), data('$ ')] },
    { name: 'finish of an unknown command changes nothing', actions: [exec('1'), fin('2', 1)] },
    { name: 'cleared empties the content', actions: [data('x'), exec('1'), { type: 'terminal/cleared' }, data('y')] },
    { name: 'duplicate command ids are all completed', actions: [exec('1'), data('a'), fin('1', 0), exec('1'), fin('1', 3)] },
    {
      name: 'snapshot content is continued',
      initial: base([{ type: 'command', commandId: 'a', commandLine: 'x', output: 'o', timestamp: 1, isComplete: false }]),
      actions: [data('p'), fin('a', 0), data('q')],
    },
    { name: 'other actions keep the content', actions: [data('x'), { type: 'terminal/titleChanged', title: 'n' }, { type: 'terminal/resized', cols: 9, rows: 3 }] },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const initial = structuredClone(c.initial ?? base());
      let want = structuredClone(initial);
      for (const a of c.actions) want = terminalReducer(want, a);
      const m = mirrorOf(c.actions, undefined, initial);
      assert.deepEqual(structuredClone(m.confirmed), want, `actions ${JSON.stringify(c.actions)}`);
      assert.deepEqual(initial, c.initial ?? base(), 'the snapshot state was modified');
    });
  }
});

describe('trimming to the budget', () => {
  const cases: { name: string; budget: number; chunks: string[]; want: string }[] = [
    // 30 lines of 9 bytes into 100: each 12th line trims to 8 lines (≤ 80 bytes, after a newline), so lines 20–29 are kept.
    { name: 'cuts after a newline', budget: 100, chunks: Array.from({ length: 30 }, (_, i) => `line ${String(i).padStart(3, '0')}\n`), want: 'line 020\n' },
    { name: 'never inside an escape sequence', budget: 40, chunks: ['x'.repeat(30), '\x1b[38;5;12m' + 'y'.repeat(25)], want: 'y'.repeat(25) },
    { name: 'never inside a surrogate pair', budget: 40, chunks: ['😀'.repeat(20)], want: '😀' },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const m = mirrorOf(c.chunks.map(data), c.budget);
      const text = contentText(m.confirmed.content);
      const all = c.chunks.join('');
      assert.ok(m.contentSize <= c.budget, `size ${m.contentSize}, want ≤ ${c.budget}`);
      assert.equal(m.contentSize, utf8Length(text), 'size counts UTF-8 bytes of what is kept');
      assert.ok(all.endsWith(text), `kept ${JSON.stringify(text)}, want a suffix of the output`);
      assert.ok(text.startsWith(c.want), `kept ${JSON.stringify(text)}, want it to start with ${JSON.stringify(c.want)}`);
    });
  }

  test('safeCut', () => {
    const cases: { s: string; at: number; want: number }[] = [
      { s: 'ab\ncd', at: 1, want: 3 },
      { s: 'a\x1b[1;2mb', at: 3, want: 7 },
      { s: 'a\x1b]0;title\x07b', at: 5, want: 11 },
      { s: 'a😀b', at: 2, want: 3 },
      { s: 'abc', at: 0, want: 0 },
      { s: 'abc', at: 9, want: 3 },
    ];
    for (const c of cases) assert.equal(safeCut(c.s, c.at), c.want, `safeCut(${JSON.stringify(c.s)}, ${c.at})`);
  });

  test('the server default budget is kept by default', () => {
    const m = mirrorOf([]);
    assert.equal(m.contentBudget, DEFAULT_CONTENT_BUDGET);
    const line = 'x'.repeat(1023) + '\n';
    for (let i = 0; i < 3 * 1024; i++) feed(m, data(line)); // 3 MiB
    assert.ok(m.contentSize <= DEFAULT_CONTENT_BUDGET, `size ${m.contentSize}, want ≤ ${DEFAULT_CONTENT_BUDGET}`);
    assert.ok(m.contentSize >= DEFAULT_CONTENT_BUDGET * 0.8 - 1024, `size ${m.contentSize}, want about the budget`);
  });
});

describe('command metadata', () => {
  test('kept only for the parts kept', () => {
    const actions: StateAction[] = [];
    for (let i = 0; i < 50; i++) actions.push(exec(String(i)), data(`output of ${i}\n`.padEnd(40, '.')), fin(String(i), 0));
    const m = mirrorOf(actions, 400);
    const ids = m.confirmed.content.filter((p): p is TerminalCommandPart => p.type === 'command').map((p) => p.commandId);
    assert.ok(ids.length > 0 && ids.length < 15, `kept commands ${ids}, want a few`);
    assert.equal(ids.at(-1), '49');
    // A late finish of a trimmed command changes nothing (not even the state object).
    const before = m.confirmed;
    feed(m, fin('0', 9));
    assert.equal(m.confirmed, before, 'finish of a trimmed command: got a new state, want the same');
    // One still kept is completed.
    feed(m, exec('late'));
    feed(m, fin('late', 4));
    const late = m.confirmed.content.at(-1) as TerminalCommandPart;
    assert.deepEqual([late.commandId, late.isComplete, late.exitCode], ['late', true, 4]);
  });
});

describe('per-frame cost', () => {
  test('a frame does not copy the content array', () => {
    const m = mirrorOf([exec('1'), data('a')]);
    const before = m.confirmed;
    feed(m, data('b'));
    assert.notEqual(m.confirmed, before, 'want a new state object per action');
    assert.equal(m.confirmed.content, before.content, 'content array copied: want it appended in place');
  });

  // With 20 k commands kept, a frame once cost ~0.8 ms because
  // the content array was copied per action. Timed as the fastest of several
  // batches, which noise on a shared machine can only slow down.
  test('flat with 20 k commands', (t) => {
    const perFrame = (commands: number): number => {
      const actions: StateAction[] = [];
      for (let i = 0; i < commands; i++) actions.push(exec(String(i)), data(`$ cmd ${i}\r\n`), fin(String(i), 0));
      const m = mirrorOf(actions, 64 << 20);
      assert.equal(m.confirmed.content.length, commands);
      const frame = data('x'.repeat(99) + '\n');
      let best = Infinity;
      for (let batch = 0; batch < 7; batch++) {
        const start = performance.now();
        for (let i = 0; i < 500; i++) feed(m, frame);
        best = Math.min(best, (performance.now() - start) / 500);
      }
      return best;
    };
    const few = perFrame(10);
    const many = perFrame(20_000);
    t.diagnostic(`per 100-byte frame: ${(few * 1000).toFixed(2)} µs with 10 commands, ${(many * 1000).toFixed(2)} µs with 20 000`);
    assert.ok(many < Math.max(10 * few, 0.02), `per frame ${many} ms with 20 k commands vs ${few} ms with 10: want flat`);
  });
});

test('ContentStore copies a snapshot and leaves it alone', () => {
  const parts = Object.freeze([Object.freeze({ type: 'unclassified' as const, value: 'abc' })]);
  const s = new ContentStore(parts, 10);
  s.appendData('def');
  assert.equal(parts[0].value, 'abc');
  assert.equal(contentText(s.parts), 'abcdef');
});

/** ahp/testdata/content/cases.json, which go test ./ahp/content/ replays against the server's store. */
interface SharedCase {
  description: string;
  budget: number;
  initial?: TerminalContentPart[];
  actions: StateAction[];
  expected: TerminalContentPart[];
  size: number;
}

describe('shared content store cases (ahp/testdata/content)', () => {
  const repoRoot = process.env.TERMHOST_REPO_ROOT ?? process.cwd();
  const cases = JSON.parse(readFileSync(path.resolve(repoRoot, 'ahp/testdata/content/cases.json'), 'utf8')) as SharedCase[];
  test('the file has cases', () => assert.ok(cases.length > 0));
  for (const c of cases) {
    test(c.description, () => {
      const s = new ContentStore(c.initial ?? [], c.budget);
      for (const a of c.actions) {
        switch (a.type) {
          case 'terminal/data':
            s.appendData(a.data);
            break;
          case 'terminal/commandExecuted':
            s.commandExecuted(a);
            break;
          case 'terminal/commandFinished':
            s.commandFinished(a.commandId, a.exitCode, a.durationMs);
            break;
          case 'terminal/cleared':
            s.clear();
            break;
          default:
            assert.fail(`not a content action: ${a.type}`);
        }
      }
      assert.deepEqual(structuredClone(s.parts), c.expected);
      assert.equal(s.size, c.size);
    });
  }
});
