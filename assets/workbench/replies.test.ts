// The parser hooks that keep history and other tabs from answering a
// program's questions, and the OSC 52 policy, against a fake xterm parser
// that runs handlers as xterm does (newest first, true stops).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { IFunctionIdentifier } from '@xterm/xterm';
import { guardReplies, isColorQuery, isFocusReport, type Params, type ParserLike } from './replies';
import { decodeBase64Utf8, handleOsc52, parseOsc52 } from './clipboard';

const noop = { dispose() {} };
const key = (kind: string, id: IFunctionIdentifier | number) =>
  typeof id === 'number' ? `${kind}${id}` : `${kind}${id.prefix ?? ''}${id.intermediates ?? ''}${id.final}`;

/** Handlers by sequence; `run` returns whether xterm's default handler would still answer. */
class FakeParser implements ParserLike {
  handlers = new Map<string, ((...a: never[]) => boolean | Promise<boolean>)[]>();
  #add(k: string, fn: (...a: never[]) => boolean | Promise<boolean>) {
    const list = this.handlers.get(k) ?? [];
    list.push(fn);
    this.handlers.set(k, list);
    return noop;
  }
  registerCsiHandler(id: IFunctionIdentifier, cb: (p: Params) => boolean) {
    return this.#add(key('CSI', id), cb as never);
  }
  registerDcsHandler(id: IFunctionIdentifier, cb: (d: string, p: Params) => boolean) {
    return this.#add(key('DCS', id), cb as never);
  }
  registerOscHandler(n: number, cb: (d: string) => boolean) {
    return this.#add(key('OSC', n), cb as never);
  }
  /** true = the sequence reaches xterm's own handler. */
  reaches(k: string, arg: Params | string): boolean {
    for (const h of [...(this.handlers.get(k) ?? [])].reverse()) {
      const r = typeof arg === 'string' ? (h as (d: string, p: Params) => boolean)(arg, []) : (h as (p: Params) => boolean)(arg);
      if (r === true) return false;
    }
    return true;
  }
}

// Every question a program can ask the terminal (replies.ts), as the parser
// identifies it.
const questions: [name: string, key: string, arg: Params | string][] = [
  ['DA1 ESC[c', 'CSIc', [0]],
  ['DA2 ESC[>c', 'CSI>c', [0]],
  ['DSR ESC[5n', 'CSIn', [5]],
  ['CPR ESC[6n', 'CSIn', [6]],
  ['DECXCPR ESC[?6n', 'CSI?n', [6]],
  ['DECRQM ESC[4$p', 'CSI$p', [4]],
  ['DECRQM ESC[?2004$p', 'CSI?$p', [2004]],
  ['XTVERSION ESC[>q', 'CSI>q', [0]],
  ['XTWINOPS ESC[14t', 'CSIt', [14]],
  ['XTWINOPS ESC[18t', 'CSIt', [18]],
  ['DECRQSS DCS $q m', 'DCS$q', 'm'],
  ['XTGETTCAP DCS +q 544e', 'DCS+q', '544e'],
  ['OSC 4;1;?', 'OSC4', '1;?'],
  ['OSC 10;?', 'OSC10', '?'],
  ['OSC 11;?', 'OSC11', '?'],
  ['OSC 12;?', 'OSC12', '?'],
];

describe('guardReplies', () => {
  for (const [name, k, arg] of questions) {
    test(`${name}: swallowed unless the tab may answer`, () => {
      const p = new FakeParser();
      let may = false;
      guardReplies(p, { mayAnswer: () => may, focusReportSuppressed() {} });
      assert.equal(p.reaches(k, arg), false, `${name} reached xterm while the tab may not answer`);
      may = true;
      assert.equal(p.reaches(k, arg), true, `${name} did not reach xterm while the tab may answer`);
    });
  }

  const notQuestions: [string, string, Params | string][] = [
    ['title stack ESC[22t', 'CSIt', [22]],
    ['OSC 11 set', 'OSC11', 'rgb:00/00/00'],
    ['OSC 4 set', 'OSC4', '1;#ff0000'],
  ];
  for (const [name, k, arg] of notQuestions) {
    test(`${name}: not a question, always reaches xterm`, () => {
      const p = new FakeParser();
      guardReplies(p, { mayAnswer: () => false, focusReportSuppressed() {} });
      assert.equal(p.reaches(k, arg), true);
    });
  }

  test('DECSET 1004 still sets the mode but its immediate report is suppressed', () => {
    const p = new FakeParser();
    let may = false;
    let suppressed = 0;
    guardReplies(p, { mayAnswer: () => may, focusReportSuppressed: () => suppressed++ });
    assert.equal(p.reaches('CSI?h', [2004]), true);
    assert.equal(suppressed, 0, 'bracketed paste alone is no focus report');
    assert.equal(p.reaches('CSI?h', [1004, 2004]), true, 'the modes must still be set');
    assert.equal(suppressed, 1);
    may = true;
    assert.equal(p.reaches('CSI?h', [1004]), true);
    assert.equal(suppressed, 1, 'a tab that may answer reports its focus');
  });

  test('helpers', () => {
    assert.equal(isColorQuery('?;?'), true);
    assert.equal(isColorQuery('rgb:ff/ff/ff'), false);
    assert.equal(isFocusReport('\x1b[I'), true);
    assert.equal(isFocusReport('\x1b[Ix'), false);
  });
});

describe('OSC 52', () => {
  const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
  const cases: { name: string; data: string; want: ReturnType<typeof parseOsc52> }[] = [
    { name: 'read', data: 'c;?', want: { kind: 'read' } },
    { name: 'read of another selection', data: 'p;?', want: { kind: 'read' } },
    { name: 'write', data: `c;${b64('héllo ✓')}`, want: { kind: 'write', text: 'héllo ✓' } },
    { name: 'write, default selection', data: `;${b64('x')}`, want: { kind: 'write', text: 'x' } },
    { name: 'write, unpadded', data: 'c;eHk', want: { kind: 'write', text: 'xy' } },
    { name: 'primary selection only', data: `p;${b64('x')}`, want: { kind: 'ignore' } },
    { name: 'invalid base64 (would clear)', data: 'c;!!!', want: { kind: 'ignore' } },
    { name: 'empty (would clear)', data: 'c;', want: { kind: 'ignore' } },
    { name: 'not UTF-8', data: 'c;/w==', want: { kind: 'ignore' } },
    { name: 'no separator', data: 'c', want: { kind: 'ignore' } },
  ];
  for (const c of cases) {
    test(`parseOsc52 ${c.name}`, () => assert.deepEqual(parseOsc52(c.data), c.want, `input ${JSON.stringify(c.data)}`));
  }

  test('decodeBase64Utf8 rejects a truncated quantum', () => assert.equal(decodeBase64Utf8('eHl6e'), undefined));

  test('a read never reaches anything else; a write happens only when allowed', () => {
    const p = new FakeParser();
    const written: string[] = [];
    let allowed = false;
    // A handler registered before ours (as an addon would be) must never run.
    p.registerOscHandler(52, () => {
      throw new Error('OSC 52 reached another handler');
    });
    handleOsc52(p, { mayWrite: () => allowed, write: (t) => written.push(t) });
    assert.equal(p.reaches('OSC52', 'c;?'), false);
    assert.equal(p.reaches('OSC52', `c;${b64('secret')}`), false);
    assert.deepEqual(written, [], 'written while not allowed');
    allowed = true;
    assert.equal(p.reaches('OSC52', 'c;?'), false);
    assert.equal(p.reaches('OSC52', `c;${b64('ok')}`), false);
    assert.deepEqual(written, ['ok']);
  });
});
