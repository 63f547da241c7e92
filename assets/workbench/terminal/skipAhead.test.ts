import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as xtermModule from '@xterm/xterm';
import type { AhpClient } from '../../ahp/client';
import { WriteQueue } from '../writequeue';
import { SkipAnnouncer, SkipMarks, routeSkips, skipLabel, skipNoticeOf, type SkipNotice } from './skipAhead';

// Skip marks in a real (unopened) xterm fed through the view's write queue.

// The package is UMD: node's ESM loader hands it over as the default export.
const { Terminal } = (xtermModule as unknown as { default?: typeof xtermModule }).default ?? xtermModule;
type Terminal = xtermModule.Terminal;

const uri = 'ahp-terminal:/t1';
const cols = 40;
const rows = 10;

/** A redraw as the server writes one (terminals/screen snapshot.go): lines on screen into the scrollback, then every line. */
function redraw(lines: string[], alt = false): string {
  let s = `\x18\x1b[0m\x1b[?1049l\x1b[r\x1b[?6l\x1b[${rows};1H${'\n'.repeat(rows)}\x1b[H`;
  if (alt) s += '\x1b[?1049h';
  lines.forEach((l, y) => (s += `\x1b[${y + 1};1H${l}`));
  return s + `\x1b[0m\x1b[${lines.length + 1};1H`;
}

function setup() {
  const term = new Terminal({ cols, rows, scrollback: 1000, allowProposedApi: true });
  const queue = new WriteQueue({ write: (d, cb) => term.write(d, cb) });
  const shown: string[] = [];
  const marks = new SkipMarks(term, queue, { color: () => '#cca700', show: (t) => shown.push(t) });
  const drained = () => new Promise<void>((r) => queue.then(r));
  const text = (line: number) => term.buffer.active.getLine(line)?.translateToString(true);
  // 30 lines of history: the screen shows "old 20" … "old 29".
  marks.write(1, Array.from({ length: 30 }, (_, i) => `old ${i}`).join('\r\n'), false);
  return { term, marks, drained, text, shown };
}

const notice = (redrawSeq: number, bytes: number): SkipNotice => ({ channel: uri, bytes, redrawSeq });

describe('SkipMarks', () => {
  test('a skip marks the first line of its redraw, with the size skipped', async () => {
    const { term, marks, drained, text } = setup();
    marks.expect(notice(5, 12_345_678));
    marks.write(5, redraw(['$ make', 'step 41', 'step 42']), false);
    await drained();
    const b = term.buffer.active;
    assert.equal(b.type, 'normal');
    assert.equal(marks.marks.length, 1);
    const m = marks.marks[0]!;
    assert.equal(m.line, b.baseY, 'the top of the screen the redraw drew');
    assert.equal(text(m.line), '$ make');
    assert.equal(text(m.line - 1), 'old 29', 'above it: the screen before the skip, pushed into the scrollback');
    assert.equal(m.label, 'Skipped 12.3 MB of output to keep up: the screen is current, the scrollback above misses that output.');
    assert.deepEqual([m.buffer, m.bytes, m.skips, m.decorated], ['normal', 12_345_678, 1, true]);
    // Live output goes on; the mark stays on its line as it scrolls.
    marks.write(6, '\r\n' + Array.from({ length: 15 }, (_, i) => `new ${i}`).join('\r\n'), false);
    await drained();
    assert.equal(marks.marks.length, 1);
    assert.equal(text(marks.marks[0]!.line), '$ make');
    assert.ok(marks.marks[0]!.line < term.buffer.active.baseY, 'now in the scrollback');
  });

  test('only the data at the notice’s redrawSeq is the redraw; a replay never is', async () => {
    const { marks, drained, text } = setup();
    marks.expect(notice(9, 1000));
    marks.write(8, '\r\nearlier output', false); // held envelopes applied after the notice
    await drained();
    assert.equal(marks.marks.length, 0);
    marks.write(9, redraw(['redrawn']), false);
    await drained();
    assert.deepEqual(marks.marks.map((m) => text(m.line)), ['redrawn']);

    marks.expect(notice(12, 1000));
    marks.write(12, redraw(['replayed output']), true); // a reconnect replay at that seq is the output itself
    marks.write(13, redraw(['later']), false);
    await drained();
    assert.equal(marks.marks.length, 1, 'no mark for a replay, and the notice is gone');
  });

  test('each skip on the main screen gets its own mark', async () => {
    const { marks, drained, text } = setup();
    marks.expect(notice(5, 4_000_000));
    marks.write(5, redraw(['first redraw']), false);
    marks.write(6, '\r\nlive', false);
    marks.expect(notice(7, 6_000_000));
    marks.write(7, redraw(['second redraw']), false);
    await drained();
    const got = marks.marks.map((m) => [text(m.line), m.label]);
    assert.deepEqual(got, [
      ['first redraw', skipLabel(4_000_000)],
      ['second redraw', skipLabel(6_000_000)],
    ]);
    assert.equal(marks.marks[1]!.line - marks.marks[0]!.line, rows, 'the first redraw’s screen between them');
  });

  test('skips under a full-screen program: one mark with the total, then the main screen when it leaves', async () => {
    const { term, marks, drained } = setup();
    marks.expect(notice(5, 1_000_000));
    marks.write(5, redraw(['top - 10:00'], true), false);
    await drained();
    assert.deepEqual(
      marks.marks.map((m) => [m.buffer, m.line, m.label]),
      [['alternate', 0, 'Skipped 1.0 MB of output to keep up: the screen is current, the scrollback above misses that output.']],
    );
    marks.expect(notice(6, 2_500_000));
    marks.write(6, redraw(['top - 10:01'], true), false);
    await drained();
    assert.deepEqual(
      marks.marks.map((m) => [m.buffer, m.line, m.skips, m.label]),
      [['alternate', 0, 2, 'Skipped 3.5 MB of output in 2 skips to keep up: the screen is current, the scrollback above misses that output.']],
    );
    // The program leaves its full screen: the main screen's top is where the last redraw left it.
    marks.write(7, '\x1b[?1049l', false);
    await drained();
    const b = term.buffer.active;
    assert.equal(b.type, 'normal');
    assert.deepEqual(
      marks.marks.map((m) => [m.buffer, m.line, m.bytes, m.skips]),
      [['normal', b.baseY, 3_500_000, 2]],
    );
  });

  test('a redraw that ends on the main screen takes the skips made under the program', async () => {
    const { marks, drained, text } = setup();
    marks.expect(notice(5, 1_000_000));
    marks.write(5, redraw(['vim'], true), false);
    marks.expect(notice(6, 2_000_000));
    marks.write(6, redraw(['$ after vim']), false);
    await drained();
    assert.deepEqual(
      marks.marks.map((m) => [m.buffer, text(m.line), m.bytes, m.skips]),
      [['normal', '$ after vim', 3_000_000, 2]],
    );
  });

  test('clear removes the marks (a snapshot resets the terminal, or it is cleared)', async () => {
    const { term, marks, drained } = setup();
    marks.expect(notice(5, 1000));
    marks.write(5, redraw(['x']), false);
    await drained();
    assert.equal(marks.marks.length, 1);
    marks.clear();
    term.reset();
    assert.equal(marks.marks.length, 0);
    marks.expect(notice(6, 1000));
    marks.write(6, redraw(['y']), false);
    await drained();
    term.clear(); // xterm erases the line: its mark goes with it
    assert.equal(marks.marks.length, 0);
  });
});

function fakeClient() {
  const listeners: ((method: string, params: unknown) => void)[] = [];
  const client = {
    on: (ev: string, fn: (method: string, params: unknown) => void) => {
      if (ev === 'notification') listeners.push(fn);
      return () => {};
    },
  } as unknown as Pick<AhpClient, 'on'>;
  return { client, emit: (method: string, params: unknown) => listeners.forEach((fn) => fn(method, params)) };
}

function fakeTimers() {
  const due: (() => void)[] = [];
  return { setTimeout: (fn: () => void) => due.push(fn), fire: () => due.shift()?.(), get waiting() { return due.length; } };
}

describe('routeSkips', () => {
  test('a notice reaches its terminal’s view, whose next redraw is marked', async () => {
    const { client, emit } = fakeClient();
    const { marks, drained, text } = setup();
    const said: string[] = [];
    routeSkips(client, (u) => (u === uri ? { onSkipped: (n) => marks.expect(n) } : undefined), () => 'build', new SkipAnnouncer((t) => said.push(t), fakeTimers()));
    emit('x-termhost/skipped', { channel: uri, bytes: 2_000_000, redrawSeq: 5 });
    marks.write(5, redraw(['redrawn']), false);
    await drained();
    assert.deepEqual(marks.marks.map((m) => [text(m.line), m.bytes]), [['redrawn', 2_000_000]]);
    assert.deepEqual(said, ['Terminal “build” skipped 2.0 MB of output to keep up. Its screen is current; its scrollback misses that output.']);
  });

  test('notices for another terminal, malformed ones and other methods are ignored without throwing', async () => {
    const { client, emit } = fakeClient();
    const { marks, drained } = setup();
    const said: string[] = [];
    const got: SkipNotice[] = [];
    routeSkips(
      client,
      (u) => (u === uri ? { onSkipped: (n) => (got.push(n), marks.expect(n)) } : undefined),
      () => 'build',
      new SkipAnnouncer((t) => said.push(t), fakeTimers()),
    );
    const ignored: [string, string, unknown][] = [
      ['another terminal (no view)', 'x-termhost/skipped', { channel: 'ahp-terminal:/other', bytes: 10, redrawSeq: 5 }],
      ['no params', 'x-termhost/skipped', undefined],
      ['null params', 'x-termhost/skipped', null],
      ['params not an object', 'x-termhost/skipped', 'skipped'],
      ['channel not a string', 'x-termhost/skipped', { channel: 5, bytes: 10, redrawSeq: 5 }],
      ['channel missing', 'x-termhost/skipped', { bytes: 10, redrawSeq: 5 }],
      ['bytes missing', 'x-termhost/skipped', { channel: uri, redrawSeq: 5 }],
      ['bytes negative', 'x-termhost/skipped', { channel: uri, bytes: -1, redrawSeq: 5 }],
      ['bytes not a number', 'x-termhost/skipped', { channel: uri, bytes: '10', redrawSeq: 5 }],
      ['bytes NaN', 'x-termhost/skipped', { channel: uri, bytes: NaN, redrawSeq: 5 }],
      ['redrawSeq missing', 'x-termhost/skipped', { channel: uri, bytes: 10 }],
      ['redrawSeq not an integer', 'x-termhost/skipped', { channel: uri, bytes: 10, redrawSeq: 4.5 }],
      ['serverSeq in place of redrawSeq', 'x-termhost/skipped', { channel: uri, bytes: 10, serverSeq: 5 }],
      ['another notification', 'x-termhost/presence', { channel: uri, bytes: 10, redrawSeq: 5 }],
    ];
    for (const [name, method, params] of ignored) assert.doesNotThrow(() => emit(method, params), name);
    assert.deepEqual(got, []);
    assert.deepEqual(said, []);
    // The data at that serverSeq is written as any output: no mark.
    marks.write(5, redraw(['plain output']), false);
    await drained();
    assert.equal(marks.marks.length, 0);
  });
});

test('skipNoticeOf keeps well-formed notices only', () => {
  assert.deepEqual(skipNoticeOf({ channel: uri, bytes: 0, redrawSeq: 0, extra: 1 }), { channel: uri, bytes: 0, redrawSeq: 0 });
  assert.equal(skipNoticeOf({ channel: '', bytes: 1, redrawSeq: 1 }), undefined);
  assert.equal(skipNoticeOf({ channel: uri, bytes: Infinity, redrawSeq: 1 }), undefined);
  assert.equal(skipNoticeOf({ channel: uri, bytes: 1, redrawSeq: -1 }), undefined);
});

test('SkipAnnouncer: the first skip at once, then one total per quiet period', () => {
  const said: string[] = [];
  const timers = fakeTimers();
  const a = new SkipAnnouncer((t) => said.push(t), timers, 10_000);
  a.skipped('build', 12_345_678);
  assert.deepEqual(said, ['Terminal “build” skipped 12.3 MB of output to keep up. Its screen is current; its scrollback misses that output.']);
  // A stalled reader skips every few MB: nothing more is said until the quiet period ends.
  a.skipped('build', 5_000_000);
  a.skipped('build', 5_000_000);
  a.skipped('logs', 1000);
  assert.equal(said.length, 1);
  timers.fire();
  assert.equal(said[1], 'Terminal “build” skipped 10.0 MB more output in 2 skips to keep up. Terminal “logs” skipped 1.0 kB more output to keep up.');
  assert.equal(timers.waiting, 1, 'another quiet period after saying the total');
  timers.fire();
  assert.equal(said.length, 2, 'nothing new: nothing said');
  assert.equal(timers.waiting, 0, 'the quiet period is over');
  a.skipped('build', 2000);
  assert.equal(said[2], 'Terminal “build” skipped 2.0 kB of output to keep up. Its screen is current; its scrollback misses that output.');
});
