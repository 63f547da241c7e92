import { test } from 'node:test';
import assert from 'node:assert/strict';
import { handBackClaim, lastAgentOf, mayHandBack, runByOf, runByPersonOf } from './agentMark';
import { CommandTracker } from './commandTracker';
import type { TerminalInfo } from '../../ahp/types';

test('runByOf names the agent that ran a command, nobody for a person', () => {
  assert.equal(runByOf({ 'termhost/runBy': { kind: 'agent', name: 'Agent · Claude Code' } }), 'Agent · Claude Code');
  assert.equal(runByOf({ 'termhost/runBy': { kind: 'agent' } }), 'Agent');
  assert.equal(runByOf({ 'termhost/runBy': { kind: 'person', name: 'x' } }), undefined);
  assert.equal(runByOf({ other: 1 }), undefined);
  assert.equal(runByOf(undefined), undefined);
});

test('runByPersonOf names the SSO person who had control, nobody for an agent', () => {
  assert.equal(runByPersonOf({ 'termhost/runBy': { kind: 'person', name: 'Alice Smith' } }), 'Alice Smith');
  assert.equal(runByPersonOf({ 'termhost/runBy': { kind: 'agent', name: 'Agent' } }), undefined);
  assert.equal(runByPersonOf({ 'termhost/runBy': { kind: 'person' } }), undefined);
  assert.equal(runByPersonOf(undefined), undefined);
});

test('the owner hands a terminal a person took back to its agent session', () => {
  const info: TerminalInfo = {
    resource: 'ahp-terminal:/a',
    title: 't',
    claim: { kind: 'client', clientId: 'me' },
    _meta: { 'termhost/agent': { session: 'ahp-session:/termhost-mcp/x', chat: 'ahp-chat:/termhost-mcp/x', name: 'Agent · Claude Code' } },
  };
  const last = lastAgentOf(info);
  assert.deepEqual(last, { session: 'ahp-session:/termhost-mcp/x', chat: 'ahp-chat:/termhost-mcp/x', name: 'Agent · Claude Code' });
  assert.equal(mayHandBack('owner', info.claim, last, false), true);
  assert.equal(mayHandBack('driver', info.claim, last, false), false, 'only the owner gives a terminal to an agent session');
  assert.equal(mayHandBack('owner', { kind: 'session', session: 'ahp-session:/termhost-mcp/x' }, last, false), false, 'the agent holds it already');
  assert.equal(mayHandBack('owner', info.claim, last, true), false, 'an exited terminal');
  assert.equal(mayHandBack('owner', info.claim, lastAgentOf({ ...info, _meta: {} }), false), false, 'no agent ever held it');
  assert.deepEqual(handBackClaim(last!), { kind: 'session', session: 'ahp-session:/termhost-mcp/x', chat: 'ahp-chat:/termhost-mcp/x' });
});

test('the command tracker keeps the agent mark of executed commands and snapshot parts', () => {
  const tr = new CommandTracker();
  const meta = { 'termhost/runBy': { kind: 'agent', name: 'Agent · Claude Code' } };
  assert.equal(tr.executed({ type: 'terminal/commandExecuted', commandId: 'c1', commandLine: 'make', timestamp: 1, _meta: meta }).runBy, 'Agent · Claude Code');
  assert.equal(tr.executed({ type: 'terminal/commandExecuted', commandId: 'c2', commandLine: 'ls', timestamp: 2 }).runBy, undefined);
  // A snapshot's part has no _meta: its commandExecuted's comes beside the state.
  const part = { type: 'command' as const, commandId: 'c3', commandLine: 'make', output: '', timestamp: 3, isComplete: true, exitCode: 2 };
  assert.equal(tr.fromPart(part, meta).runBy, 'Agent · Claude Code');
  assert.equal(tr.fromPart({ ...part, commandId: 'c4' }).runBy, undefined);
});

test('run-by names without direction or control characters', () => {
  assert.equal(runByPersonOf({ 'termhost/runBy': { kind: 'person', name: 'Ali\u202ece' } }), 'Alice');
  assert.equal(runByOf({ 'termhost/runBy': { kind: 'agent', name: '\u2067Agent · X\u2069' } }), 'Agent · X');
  assert.equal(runByPersonOf({ 'termhost/runBy': { kind: 'person', name: '\u202e' } }), undefined);
});
