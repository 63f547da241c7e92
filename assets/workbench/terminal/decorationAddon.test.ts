import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as xtermModule from '@xterm/xterm';
import { DecorationAddon } from './decorationAddon';
import { CommandHover } from './commandHover';
import type { CommandRecord } from './commandTracker';
import type { Themes } from '../theme';

// Where a command's mark goes, in a real (unopened) xterm.

// The package is UMD: node's ESM loader hands it over as the default export.
const { Terminal } = (xtermModule as unknown as { default?: typeof xtermModule }).default ?? xtermModule;
type Terminal = xtermModule.Terminal;

const themes = { colors: { success: '#0f0', failure: '#f00' } } as unknown as Themes;

function setup(scrollback = 1000): { term: Terminal; addon: DecorationAddon; write: (s: string) => Promise<void> } {
  const term = new Terminal({ cols: 40, rows: 10, scrollback, allowProposedApi: true });
  const addon = new DecorationAddon(themes, new CommandHover({ copyOutput() {}, copyCommand() {} }));
  term.loadAddon(addon);
  return { term, addon, write: (s) => new Promise((r) => term.write(s, r)) };
}

const record = (commandId: string, commandLine: string): CommandRecord => ({ commandId, commandLine, timestamp: 0, isComplete: false });

const lineOf = (term: Terminal, rec: CommandRecord) => term.buffer.active.getLine(rec.marker!.line)?.translateToString(true);

describe('DecorationAddon marks', () => {
  // Each step: output written, then a command starts (placeMarker) or ends (finished).
  type Step = { out: string; start?: CommandRecord; finish?: CommandRecord };
  const cases: { name: string; scrollback?: number; steps: () => Step[]; want: Record<string, string> }[] = [
    {
      name: 'a typed command: the line above the cursor',
      steps: () => {
        const a = record('a', 'make');
        return [{ out: '$ make\r\n', start: a }, { out: 'built\r\n', finish: a }];
      },
      want: { a: '$ make' },
    },
    {
      name: 'a multi-line command: its first line',
      steps: () => {
        const a = record('a', 'for i in 1\ndo echo $i\ndone');
        return [{ out: '$ for i in 1\r\n> do echo $i\r\n> done\r\n', start: a }, { out: '1\r\n', finish: a }];
      },
      want: { a: '$ for i in 1' },
    },
    {
      name: 'the next pasted line, no prompt before it: where its output starts',
      steps: () => {
        const a = record('a', 'echo one');
        const b = record('b', 'echo two');
        return [{ out: '$ echo one\r\n', start: a }, { out: 'one\r\n', finish: a }, { out: '', start: b }, { out: 'two\r\n', finish: b }];
      },
      want: { a: '$ echo one', b: 'two' },
    },
    {
      name: 'after a prompt again: the line above',
      steps: () => {
        const a = record('a', 'true');
        const b = record('b', 'ls');
        return [{ out: '$ true\r\n', start: a }, { out: '', finish: a }, { out: '$ ls\r\n', start: b }, { out: 'x\r\n', finish: b }];
      },
      want: { a: '$ true', b: '$ ls' },
    },
    {
      name: 'a command line that wrapped: the row its prompt is on',
      steps: () => {
        const a = record('a', 'echo ' + 'x'.repeat(50));
        return [{ out: `$ echo ${'x'.repeat(50)}\r\n`, start: a }, { out: 'x\r\n', finish: a }];
      },
      want: { a: '$ echo ' + 'x'.repeat(33) },
    },
    {
      name: 'a full scrollback: the prompt line, though the line numbers stay put',
      scrollback: 5,
      steps: () => {
        const a = record('a', 'seq 1 30');
        const b = record('b', 'read -p name? x');
        const c = record('c', 'loop');
        const seq = Array.from({ length: 30 }, (_, i) => `${i + 1}\r\n`).join('');
        return [
          { out: '$ seq 1 30\r\n', start: a },
          { out: seq, finish: a },
          { out: '$ read -p name? x\r\n', start: b },
          { out: 'name? ^C\r\n', finish: b },
          { out: '$ loop\r\n', start: c },
          { out: 'tick 1\r\n' },
        ];
      },
      // a's line was trimmed from the scrollback (its mark is disposed).
      want: { b: '$ read -p name? x', c: '$ loop' },
    },
    {
      name: 'cursor not at a line start: its line',
      steps: () => {
        const a = record('a', 'x');
        return [{ out: '$ x', start: a }];
      },
      want: { a: '$ x' },
    },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const { term, addon, write } = setup(c.scrollback);
      const recs: CommandRecord[] = [];
      for (const s of c.steps()) {
        await write(s.out);
        if (s.start) {
          addon.placeMarker(s.start);
          recs.push(s.start);
        }
        if (s.finish) addon.finished(s.finish);
      }
      const got = Object.fromEntries(recs.filter((r) => !r.marker?.isDisposed).map((r) => [r.commandId, lineOf(term, r)]));
      assert.deepEqual(got, c.want);
      term.dispose();
    });
  }

  test('a snapshot starts over: no continuation from before the reset', async () => {
    const { term, addon, write } = setup();
    const a = record('a', 'true');
    await write('$ true\r\n');
    addon.placeMarker(a);
    addon.finished(a); // cursor at line 1, column 0
    addon.clear([a]);
    term.reset();
    const b = record('b', 'ls');
    await write('$ ls\r\n'); // the cursor is at line 1, column 0 again
    addon.placeMarker(b);
    assert.equal(lineOf(term, b), '$ ls');
    term.dispose();
  });

  test('clear disposes the marks on screen (the command says its output was cleared)', async () => {
    const { term, addon, write } = setup();
    const a = record('a', 'echo hi');
    await write('$ echo hi\r\n');
    addon.placeMarker(a);
    await write('hi\r\n\x1b[H\x1b[2J\x1b[3J');
    assert.equal(a.marker?.isDisposed, true, 'marker disposed by the erase');
    term.dispose();
  });
});
