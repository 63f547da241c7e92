// The action union: known types are told apart by their guards, unknown
// ones pass through the reducers untouched.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isRootAction, isTerminalAction, type RootState, type TerminalState, type WireAction } from './types';
import { reduceChannel, rootReducer, terminalReducer } from './reducers';

describe('action guards', () => {
  const cases: { name: string; action: WireAction; root: boolean; terminal: boolean }[] = [
    { name: 'terminal data', action: { type: 'terminal/data', data: 'x' }, root: false, terminal: true },
    { name: 'command finished', action: { type: 'terminal/commandFinished', commandId: 'c' }, root: false, terminal: true },
    { name: 'root terminals', action: { type: 'root/terminalsChanged', terminals: [] }, root: true, terminal: false },
    { name: 'unknown terminal type', action: { type: 'terminal/fromTheFuture', x: 1 }, root: false, terminal: false },
    { name: 'unknown prefix', action: { type: 'session/turnStarted' }, root: false, terminal: false },
    { name: 'inherited name is no type', action: { type: 'toString' }, root: false, terminal: false },
  ];
  for (const c of cases) {
    test(c.name, () => {
      assert.equal(isRootAction(c.action), c.root, `isRootAction(${c.action.type})`);
      assert.equal(isTerminalAction(c.action), c.terminal, `isTerminalAction(${c.action.type})`);
    });
  }
});

describe('reducers leave unknown actions alone', () => {
  const term: TerminalState = { title: 't', content: [], claim: { kind: 'client', clientId: 'c' } };
  const root: RootState = { agents: [], terminals: [] };
  const cases: { name: string; action: WireAction }[] = [
    { name: 'unknown type', action: { type: 'terminal/fromTheFuture', data: 'x' } },
    { name: 'other channel kind', action: { type: 'root/agentsChanged', agents: [1] } },
  ];
  for (const c of cases) {
    test(`terminal: ${c.name}`, () => {
      assert.equal(terminalReducer(term, c.action), term, 'got a new state, want the same object');
    });
  }
  test('root: terminal action', () => {
    assert.equal(rootReducer(root, { type: 'terminal/data', data: 'x' }), root, 'got a new state, want the same object');
  });
  test('root: unknown type', () => {
    assert.equal(reduceChannel('ahp-root://', root, { type: 'root/fromTheFuture' }), root, 'got a new state, want the same object');
  });
});
