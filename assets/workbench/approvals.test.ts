import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApprovalBook, agentSecretPrompt, alwaysAllowWord, approvalsOf, attentionOf, mayAnswer, notificationTitle, outcomeText, requesterLabel, secretPromptText, visibleCommand, whyText, type Approval } from './approvals';
import { mayDrive } from './terminal/presence';
import type { TerminalInfo } from '../ahp/types';

const T1 = 'ahp-terminal:/t1';
const T2 = 'ahp-terminal:/t2';

function approval(p: Partial<Approval> = {}): Approval {
  return {
    id: 'a1',
    terminal: T1,
    commandLine: 'rm -rf build',
    requestedBy: { kind: 'agent', name: 'Agent · Claude Code' },
    rule: 'rm',
    reason: 'rm deletes files',
    createdAt: 1,
    expiresAt: 2,
    state: 'pending',
    ...p,
  };
}

test('approvalsOf keeps well-formed approvals and drops the rest', () => {
  const good = approval();
  const list = approvalsOf({ approvals: [good, null, 'x', { ...good, id: 7 }, { ...good, state: 'maybe' }, { ...good, requestedBy: undefined }, { ...good, commandLine: undefined }] });
  assert.deepEqual(list, [good]);
  assert.deepEqual(approvalsOf(undefined), []);
  assert.deepEqual(approvalsOf({ approvals: 'no' }), []);
});

test('visibleCommand shows control and direction characters as escapes, keeps newlines and tabs', () => {
  // An override that would show "rm -rf ~ #etad" reversed, an ESC that would recolour, a carriage return that would hide the start.
  assert.equal(visibleCommand('echo hi \u202E#etad'), 'echo hi \\u202e#etad');
  assert.equal(visibleCommand('printf "\u001b[2J"'), 'printf "\\x1b[2J"');
  assert.equal(visibleCommand('rm -rf /\rls'), 'rm -rf /\\rls');
  assert.equal(visibleCommand('make\tall\nmake test'), 'make\tall\nmake test');
  assert.equal(visibleCommand('a\u200bb\u2066c\u0085'), 'a\\u200bb\\u2066c\\x85');
  assert.equal(visibleCommand('git status'), 'git status');
});

test('requesterLabel and notificationTitle name who asks, cleaned', () => {
  assert.equal(requesterLabel(approval()), 'Agent · Claude Code');
  assert.equal(requesterLabel(approval({ requestedBy: { kind: 'driver', name: 'bob\u202E' } })), 'bob (driver)');
  assert.equal(requesterLabel(approval({ requestedBy: { kind: 'agent', name: ' ' } })), 'Agent');
  assert.equal(notificationTitle(approval(), 'build'), 'Agent wants to run `rm -rf build` in build');
  assert.equal(notificationTitle(approval({ requestedBy: { kind: 'driver', name: 'bob' } }), ''), 'bob (driver) wants to run `rm -rf build` in a terminal');
  assert.equal(notificationTitle(approval({ commandLine: `echo ${'x'.repeat(200)}` }), 'b').length < 110, true);
  assert.equal(notificationTitle(approval({ commandLine: 'a\nb' }), 'b'), 'Agent wants to run `a ⏎ b` in b');
});

test('whyText says the rule and the reason', () => {
  assert.equal(whyText(approval()), 'rule rm: rm deletes files');
  assert.equal(whyText(approval({ reason: '' })), 'rule rm');
  assert.equal(whyText(approval({ rule: '' })), 'rm deletes files');
});

test('outcomeText says who answered, for everyone', () => {
  assert.equal(outcomeText(approval({ state: 'approved', answeredBy: { name: 'Ann' } })), 'Approved by Ann');
  assert.equal(outcomeText(approval({ state: 'approved', answeredBy: { name: 'Ann' }, alwaysAllow: true })), 'Approved by Ann (always allowed from now on)');
  assert.equal(outcomeText(approval({ state: 'denied', answeredBy: { name: 'Ann' } })), 'Denied by Ann');
  assert.equal(outcomeText(approval({ state: 'denied', answeredBy: { name: 'Ann' }, denyReason: 'not on main' })), 'Denied by Ann: not on main');
  assert.equal(outcomeText(approval({ state: 'timed_out' })), 'Nobody answered in time: not run');
  assert.equal(outcomeText(approval({ state: 'withdrawn' })), 'Withdrawn: the requester left');
  assert.equal(outcomeText(approval({ state: 'approved' })), 'Approved');
});

test('alwaysAllowWord is the requester policy’s suggestion for one plain command, else nothing', () => {
  assert.equal(alwaysAllowWord('rm -rf build'), 'rm');
  assert.equal(alwaysAllowWord('git push origin main'), 'git push');
  assert.equal(alwaysAllowWord('npm run lint'), 'npm run');
  assert.equal(alwaysAllowWord('/usr/bin/git reset --hard'), 'git reset');
  assert.equal(alwaysAllowWord('git --no-pager log'), 'git');
  assert.equal(alwaysAllowWord('go test ./...'), 'go test');
  assert.equal(alwaysAllowWord('curl -fsSL x | sh'), undefined);
  assert.equal(alwaysAllowWord('cd x && rm y'), undefined);
  assert.equal(alwaysAllowWord('echo $(whoami)'), undefined);
  assert.equal(alwaysAllowWord('FOO=1 make'), undefined);
  assert.equal(alwaysAllowWord("bash -c 'rm x'"), undefined);
  assert.equal(alwaysAllowWord('echo hi > f'), undefined);
  assert.equal(alwaysAllowWord('a\nb'), undefined);
  assert.equal(alwaysAllowWord('   '), undefined);
});

test('attentionOf: a count for approvals first, a key for a password prompt', () => {
  assert.equal(attentionOf([], false), undefined);
  const one = attentionOf([approval()], true);
  assert.equal(one?.kind, 'approval');
  assert.equal(one?.text, '1');
  assert.equal(one?.title, 'Agent waits for approval to run `rm -rf build`');
  assert.equal(attentionOf([approval(), approval({ id: 'a2' })], false)?.title, 'Agent waits for approval to run `rm -rf build` (and 1 more)');
  assert.equal(attentionOf([], true)?.kind, 'secret');
});

test('a secret prompt is the bar’s only while an agent session holds the terminal', () => {
  const info = (meta: Record<string, unknown> | undefined, kind: 'session' | 'client'): TerminalInfo => ({
    resource: T1,
    title: 'build',
    claim: kind === 'session' ? { kind: 'session', session: 'ahp-session:/x', chat: 'ahp-chat:/x' } : { kind: 'client', clientId: 'me' },
    _meta: meta,
  });
  assert.equal(agentSecretPrompt(info({ 'termhost/secretPrompt': true }, 'session'), undefined), true);
  assert.equal(agentSecretPrompt(info({ 'termhost/secretPrompt': true }, 'client'), undefined), false);
  assert.equal(agentSecretPrompt(info({ 'termhost/secretPrompt': 'yes' }, 'session'), undefined), false);
  assert.equal(agentSecretPrompt(info(undefined, 'session'), undefined), false);
  assert.equal(agentSecretPrompt(undefined, undefined), false);
  // The terminal's own state (subscribed) wins over the catalogue's claim.
  assert.equal(agentSecretPrompt(info({ 'termhost/secretPrompt': true }, 'session'), { kind: 'client', clientId: 'me' }), false);
  assert.equal(secretPromptText('build', true), 'Agent needs a password in build — type it in the terminal');
  assert.equal(secretPromptText('', false), 'Agent needs a password in this terminal — the owner types it in the terminal');
});

test('the owner types a password into an agent’s terminal; drivers and viewers do not', () => {
  const session = { kind: 'session', session: 'ahp-session:/x', chat: 'ahp-chat:/x' } as const;
  assert.equal(mayDrive(session, 'me', 'owner', []), false);
  assert.equal(mayDrive(session, 'me', 'owner', [], true), true);
  assert.equal(mayDrive(session, 'me', 'driver', [], true), false);
  assert.equal(mayDrive(session, 'me', 'viewer', [], true), false);
});

test('ApprovalBook: each approval is fresh once, ends once, and changes only its terminal', () => {
  const book = new ApprovalBook();
  const a1 = approval();
  const a2 = approval({ id: 'a2', terminal: T2, createdAt: 0 });
  let r = book.set([a1, a2]);
  assert.deepEqual([...r.changed].sort(), [T1, T2]);
  assert.deepEqual(r.fresh.map((a) => a.id), ['a1', 'a2']);
  assert.deepEqual(r.ended, []);
  // The same list again (coalesced resends, a reconnect): nothing new.
  r = book.set([a1, a2]);
  assert.equal(r.changed.size, 0);
  assert.equal(r.fresh.length, 0);
  // a1 answered: its terminal changes, it ends, it stays in the list as answered.
  const done = { ...a1, state: 'approved' as const, answeredBy: { name: 'Ann' } };
  r = book.set([done, a2]);
  assert.deepEqual([...r.changed], [T1]);
  assert.deepEqual(r.ended.map((a) => a.id), ['a1']);
  assert.deepEqual(book.pending(T1), []);
  assert.deepEqual(book.answered(T1), [done]);
  // a2 leaves the list without an answer (its requester left): it ends too.
  r = book.set([done]);
  assert.deepEqual([...r.changed], [T2]);
  assert.deepEqual(r.ended.map((a) => a.id), ['a2']);
  // An approval seen pending once is not fresh again if it comes back.
  r = book.set([done, a2]);
  assert.equal(r.fresh.length, 0);
  assert.equal(book.get('a2'), a2);
});

test('ApprovalBook lists a terminal’s pending approvals oldest first', () => {
  const book = new ApprovalBook();
  book.set([approval({ id: 'late', createdAt: 9 }), approval({ id: 'early', createdAt: 3 }), approval({ id: 'other', terminal: T2 })]);
  assert.deepEqual(book.pending(T1).map((a) => a.id), ['early', 'late']);
});

test('the owner answers any approval; a holder not its own driver Enter; a viewer none', () => {
  const agent = approval();
  const driver = approval({ requestedBy: { kind: 'driver', name: 'alice' } });
  assert.equal(mayAnswer('owner', false, agent), true);
  assert.equal(mayAnswer('owner', false, driver), true);
  assert.equal(mayAnswer('driver', true, agent), true);
  assert.equal(mayAnswer('driver', false, agent), false);
  assert.equal(mayAnswer('driver', true, driver), false);
  assert.equal(mayAnswer('viewer', true, agent), false);
  assert.equal(mayAnswer('owner', true, undefined), false);
});
