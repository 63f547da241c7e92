import { test } from 'node:test';
import assert from 'node:assert/strict';
import { initials, memberLabel, membersOf, type Member } from './presence';

const tab: Member = { id: 'p000000000001', name: 'Owner', kind: 'owner', device: 'Firefox on Linux', control: true };
const phone: Member = { id: 'p000000000002', name: 'Owner', kind: 'owner', device: 'Chrome on Android' };
const alice: Member = { id: 'p000000000003', name: 'alice', kind: 'driver', device: 'Chrome on Android' };
const board: Member = { id: 'p000000000004', name: 'CI dashboard', kind: 'viewer' };
const cli: Member = { id: 'p000000000005', name: 'bob@build1', kind: 'cli' };

test('memberLabel: the owner sees itself as You, others see labels', () => {
  const cases: [string, Member, 'owner' | 'driver' | 'viewer', string | undefined, string][] = [
    ['this tab', tab, 'owner', tab.id, 'You (this tab)'],
    ["the owner's phone, seen by the owner", phone, 'owner', tab.id, 'You (Chrome on Android)'],
    ["the owner's CLI, seen by the owner", cli, 'owner', tab.id, 'You (bob@build1, CLI)'],
    ['the owner, seen by a driver', tab, 'driver', alice.id, 'Owner (Firefox on Linux)'],
    ['a driver link', alice, 'owner', tab.id, 'alice'],
    ['a viewer link', board, 'owner', tab.id, 'CI dashboard (viewer)'],
    ['a CLI, seen by a viewer', cli, 'viewer', board.id, 'bob@build1 (CLI)'],
  ];
  for (const [name, m, role, self, want] of cases) assert.equal(memberLabel(m, role, self), want, name);
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
