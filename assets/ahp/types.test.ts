// The action union: known types are told apart by their guards, unknown
// ones pass through the reducers untouched.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isRootAction, isTerminalAction, isTerminalChannel, terminalIdOf, terminalUri, type RootState, type TerminalState, type WireAction } from './types';
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

describe('terminal URIs of any client', () => {
  const channels: { uri: string; terminal: boolean }[] = [
    { uri: 'ahp-terminal:/3f2c', terminal: true },
    { uri: 'agenthost-terminal:/0b1e2c3d-1111-4222-8333-444455556666', terminal: true },
    { uri: 'urn:uuid:0b1e', terminal: true },
    { uri: 'ahp-root://', terminal: false },
    { uri: 'ahp-session:/s1', terminal: false },
    { uri: 'AHP-CHAT:/c', terminal: false },
    { uri: 'file:///tmp', terminal: false },
    { uri: '3f2c', terminal: false },
  ];
  for (const c of channels) {
    test(`isTerminalChannel(${c.uri})`, () => assert.equal(isTerminalChannel(c.uri), c.terminal));
  }
  const ids: { uri: string; id: string }[] = [
    { uri: 'ahp-terminal:/3f2c', id: '3f2c' },
    { uri: 'agenthost-terminal:/0b1e', id: 'agenthost-terminal:/0b1e' },
    { uri: 'ahp-terminal:/a:b', id: 'ahp-terminal:/a:b' },
  ];
  for (const c of ids) {
    test(`page id of ${c.uri}`, () => {
      assert.equal(terminalIdOf(c.uri), c.id);
      assert.equal(terminalUri(terminalIdOf(c.uri)), c.uri, 'round trip');
    });
  }
  test('page path of a client URI matches the server route', () => {
    assert.equal(`/t/${encodeURIComponent(terminalIdOf('agenthost-terminal:/0b1e'))}`, '/t/agenthost-terminal%3A%2F0b1e');
  });
  test('reduceChannel applies terminal reducers to client URIs', () => {
    const state = { title: 't', content: [], lifecycle: { status: 'running' } } as unknown as TerminalState;
    const next = reduceChannel('agenthost-terminal:/0b1e', state, { type: 'terminal/titleChanged', title: 'new' }) as TerminalState;
    assert.equal(next.title, 'new');
  });
});
