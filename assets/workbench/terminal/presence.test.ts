import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agentHolderLabel, initials, mayDrive, memberLabel, membersOf, presenceLabels, viewersOf, type Member } from './presence';

const tab: Member = { id: 'p000000000001', name: 'Owner', kind: 'owner', device: 'Firefox on Linux', control: true };
const phone: Member = { id: 'p000000000002', name: 'Owner', kind: 'owner', device: 'Chrome on Android' };
const alice: Member = { id: 'p000000000003', name: 'alice', kind: 'driver', device: 'Chrome on Android' };
const board: Member = { id: 'p000000000004', name: 'CI dashboard', kind: 'viewer' };
const cli: Member = { id: 'p000000000005', name: 'bob@build1', kind: 'cli' };
const ssoAlice: Member = { id: 'p000000000006', name: 'Alice Smith', kind: 'owner', person: true };
const ssoBob: Member = { id: 'p000000000007', name: 'bob@corp.com', kind: 'viewer', person: true };

test('memberLabel: the owner sees itself as You, others see labels', () => {
  const cases: [string, Member, 'owner' | 'driver' | 'viewer', string | undefined, string][] = [
    ['this tab', tab, 'owner', tab.id, 'You (this tab)'],
    ["the owner's phone, seen by the owner", phone, 'owner', tab.id, 'You (Chrome on Android)'],
    ["the owner's CLI, seen by the owner", cli, 'owner', tab.id, 'You (bob@build1, CLI)'],
    ['the owner, seen by a driver', tab, 'driver', alice.id, 'Owner (Firefox on Linux)'],
    ['a driver link', alice, 'owner', tab.id, 'alice'],
    ['a viewer link', board, 'owner', tab.id, 'CI dashboard (viewer)'],
    ['a CLI, seen by a viewer', cli, 'viewer', board.id, 'bob@build1 (CLI)'],
    ['an SSO owner, seen by another SSO owner', ssoAlice, 'owner', 'p000000000008', 'Alice Smith'],
    ['an SSO owner, seen by herself', ssoAlice, 'owner', ssoAlice.id, 'You'],
    ['an SSO viewer, seen by an owner', ssoBob, 'owner', ssoAlice.id, 'bob@corp.com (viewer)'],
  ];
  for (const [name, m, role, self, want] of cases) assert.equal(memberLabel(m, role, self), want, name);
});

test('memberLabel: to a person signed in by SSO, only they are You', () => {
  const ownerTab: Member = { ...phone, id: 'p000000000010', device: 'Firefox on Linux' };
  const cases: [string, Member, string][] = [
    ['herself', ssoAlice, 'You'],
    ["the owner token's CLI", cli, 'bob@build1 (CLI)'],
    ["the owner token's tab", ownerTab, 'Owner (Firefox on Linux)'],
  ];
  for (const [name, m, want] of cases) assert.equal(memberLabel(m, 'owner', ssoAlice.id, true), want, name);
});

test('initials', () => {
  const cases: [string, string][] = [
    ['alice', 'A'],
    ['You (this tab)', 'Y'],
    ['bob@build1', 'BB'],
    ['CI dashboard', 'CD'],
    ['', '?'],
  ];
  for (const [name, want] of cases) assert.equal(initials(name), want, name);
});

test('membersOf keeps well-formed members only', () => {
  assert.deepEqual(membersOf(undefined), []);
  assert.deepEqual(membersOf({ members: 'nope' }), []);
  assert.deepEqual(membersOf({ members: [alice, { name: 'no id' }, null] }), [alice]);
});

// Control means what the UI says: the page lets you type
// exactly when the server accepts your keystrokes.
test('mayDrive: the holder types; others while nobody here holds it', async (t) => {
  const mine = { kind: 'client' as const, clientId: 'web-me' };
  const theirs = { kind: 'client' as const, clientId: 'web-other' };
  const agent = { kind: 'session' as const, session: 'copilot:/s', chat: 'copilot:/s' };
  const cases: [string, Parameters<typeof mayDrive>, boolean][] = [
    ['the holder', [mine, 'web-me', 'driver', [alice]], true],
    ['a driver while the holder is here', [theirs, 'web-me', 'driver', [tab, alice]], false],
    ['the owner while another holds it: takes control first', [theirs, 'web-me', 'owner', [tab, phone]], false],
    ['a driver when nobody here holds it: the first keystroke takes control', [theirs, 'web-me', 'driver', [phone, alice]], true],
    ['a viewer, never', [theirs, 'web-me', 'viewer', [phone]], false],
    ["the owner, an agent session's terminal: takes control first", [agent, 'web-me', 'owner', [tab]], false],
    ["a driver, an agent session's terminal", [agent, 'web-me', 'driver', [alice]], false],
  ];
  for (const [name, args, want] of cases) await t.test(name, () => assert.equal(mayDrive(...args), want));
});

test('agentHolderLabel names the agent and its running tool call', () => {
  const agent: Member = { id: 'p000000000006', name: 'Agent · Claude Code', kind: 'agent', device: 'termhost mcp' };
  const claim = { kind: 'session' as const, session: 'ahp-session:/termhost-mcp/1', chat: 'ahp-chat:/termhost-mcp/1' };
  assert.equal(agentHolderLabel([tab, agent], claim), 'Agent · Claude Code');
  assert.equal(agentHolderLabel([tab, agent], { ...claim, turnId: 'turn-1', toolCallId: 'call-1' }), 'Agent · Claude Code, running a tool call');
  assert.equal(agentHolderLabel([tab], claim), 'an agent session');
  assert.equal(memberLabel(agent, 'owner', tab.id), 'Agent · Claude Code');
});

test('memberLabel: names and devices without direction or control characters', () => {
  const rlo: Member = { id: 'p000000000009', name: 'Eve\u202e renwO', kind: 'driver', device: 'Fire\u2066fox\u001b[31m' };
  assert.equal(memberLabel(rlo, 'owner', tab.id), 'Eve renwO');
  assert.equal(memberLabel({ ...rlo, kind: 'owner', person: false }, 'driver', alice.id), 'Eve renwO (Firefox[31m)');
});

test('a crowd: presence names who is not a viewer and counts the viewers', () => {
  // The params of x-termhost/presence on a terminal with 1000 viewers.
  const params = { channel: 'ahp-terminal:/build', members: [tab, alice], viewers: 1000 };
  assert.deepEqual(membersOf(params), [tab, alice]);
  assert.equal(viewersOf(params), 1000);
  assert.deepEqual(presenceLabels(membersOf(params), (m) => memberLabel(m, 'owner', tab.id), viewersOf(params)), [
    'You (this tab) — in control',
    'alice',
    '1000 viewers',
  ]);
  // Below the threshold everyone is named and nothing is counted.
  assert.equal(viewersOf({ channel: 'ahp-terminal:/build', members: [tab, board] } as { viewers?: unknown }), 0);
  assert.deepEqual(presenceLabels([board], (m) => memberLabel(m, 'owner', tab.id), 0), ['CI dashboard (viewer)']);
  for (const bad of [-1, 1.5, '3', null, Number.MAX_VALUE]) assert.equal(viewersOf({ viewers: bad }), 0, String(bad));
  assert.deepEqual(presenceLabels([], () => '', 1), ['1 viewer']);
});
