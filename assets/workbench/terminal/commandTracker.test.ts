import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CommandTracker, commandLabel, describeCommand, terminalStatus } from './commandTracker';
import type { TerminalState } from '../../ahp/types';

describe('CommandTracker', () => {
  test('executed then finished', () => {
    const t = new CommandTracker();
    t.executed({ type: 'terminal/commandExecuted', commandId: 'a', commandLine: 'make', timestamp: 1 });
    const rec = t.finished({ type: 'terminal/commandFinished', commandId: 'a', exitCode: 2, durationMs: 30 });
    assert.deepEqual(rec && { done: rec.isComplete, code: rec.exitCode, ms: rec.durationMs }, { done: true, code: 2, ms: 30 });
    assert.equal(t.finished({ type: 'terminal/commandFinished', commandId: 'nope' }), undefined, 'finished(unknown id)');
  });

  test('remembers at most its limit, dropping the oldest with their decorations', () => {
    const t = new CommandTracker(10);
    const disposed: string[] = [];
    for (let i = 0; i < 25; i++) {
      const rec = t.executed({ type: 'terminal/commandExecuted', commandId: `c${i}`, commandLine: `echo ${i}`, timestamp: i });
      rec.decoration = { dispose: () => disposed.push(rec.commandId) } as unknown as NonNullable<typeof rec.decoration>;
      assert.ok(t.records.length <= 10, `${t.records.length} records after ${i + 1} commands`);
    }
    assert.equal(t.last?.commandId, 'c24');
    assert.ok(t.find('c24') && !t.find('c0'), 'newest kept, oldest dropped');
    assert.deepEqual(disposed, Array.from({ length: 25 - t.records.length }, (_, i) => `c${i}`), 'dropped records disposed, oldest first');
    assert.equal(t.finished({ type: 'terminal/commandFinished', commandId: 'c24', exitCode: 0 })?.isComplete, true);
  });

  test('lastWithOutput prefers the last finished command', () => {
    const t = new CommandTracker();
    t.executed({ type: 'terminal/commandExecuted', commandId: 'a', commandLine: 'ls', timestamp: 1 });
    t.finished({ type: 'terminal/commandFinished', commandId: 'a', exitCode: 0 });
    t.executed({ type: 'terminal/commandExecuted', commandId: 'b', commandLine: 'sleep 9', timestamp: 2 });
    assert.equal(t.lastWithOutput()?.commandId, 'a');
    t.clear();
    assert.equal(t.lastWithOutput(), undefined, 'after clear');
  });
});

describe('terminalStatus', () => {
  const base: TerminalState = { title: 't', content: [], claim: { kind: 'client', clientId: 'c' } };
  const cmd = { commandId: 'a', commandLine: 'make', timestamp: 1 };
  const cases: { name: string; state: TerminalState; last?: Parameters<typeof terminalStatus>[1]; want: ReturnType<typeof terminalStatus> }[] = [
    { name: 'idle', state: base, want: { kind: 'idle', label: '' } },
    { name: 'running', state: base, last: { ...cmd, isComplete: false }, want: { kind: 'running', label: 'make' } },
    { name: 'failed', state: base, last: { ...cmd, isComplete: true, exitCode: 2 }, want: { kind: 'failure', code: 2, label: 'make' } },
    { name: 'multi-line command on one row', state: base, last: { ...cmd, commandLine: 'echo one\necho two', isComplete: true, exitCode: 0 }, want: { kind: 'success', code: 0, label: 'echo one ⏎ echo two' } },
    { name: 'exited 0 wins over the last command', state: { ...base, lifecycle: { status: 'exited', exitCode: 0 } }, last: { ...cmd, isComplete: false }, want: { kind: 'exited', code: 0, label: 'exited (0)' } },
    { name: 'exited 1', state: { ...base, lifecycle: { status: 'exited', exitCode: 1 } }, want: { kind: 'failure', code: 1, label: 'exited (1)' } },
  ];
  for (const c of cases) test(c.name, () => assert.deepEqual(terminalStatus(c.state, c.last), c.want));
});

describe('commandLabel', () => {
  const cases: { name: string; line: string; max?: number; want: string }[] = [
    { name: 'one line is kept', line: 'make -j4', want: 'make -j4' },
    { name: 'lines joined with ⏎', line: 'echo one\necho two', want: 'echo one ⏎ echo two' },
    { name: 'CRLF, indentation and blank lines', line: 'for i in 1 2\r\n  do echo $i\n\ndone\n', want: 'for i in 1 2 ⏎ do echo $i ⏎ done' },
    { name: 'cut to max with an ellipsis', line: 'echo one\necho two', max: 10, want: 'echo one…' },
    { name: 'short enough for max', line: 'ls', max: 10, want: 'ls' },
    { name: 'empty', line: '', want: '' },
  ];
  for (const c of cases) test(c.name, () => assert.equal(commandLabel(c.line, c.max), c.want, `commandLabel(${JSON.stringify(c.line)}, ${c.max})`));

  test('describeCommand shows every line', () => {
    const rec = { commandId: 'a', commandLine: 'echo one\necho two', timestamp: 1, isComplete: true, exitCode: 1 };
    assert.equal(describeCommand(rec), 'echo one ⏎ echo two — exit code 1');
  });
});
