import { test } from 'node:test';
import assert from 'node:assert/strict';
import { exitSummary, formatClock, playerFit, summarizeCast } from './player';

// A recording as terminals/recording writes it: header, output, a marker per
// command line, the exit marker last.
const cast = [
  '{"version":2,"width":80,"height":24,"timestamp":1700000000,"env":{"TERM":"xterm-256color"}}',
  '[0.010,"o","$ "]',
  '[1.250,"m","make build"]',
  '[1.300,"o","building\\r\\n"]',
  '[2.000,"m","recording paused"]',
  '[3.500,"m","recording resumed"]',
  '[3.500,"r","100x30"]',
  '[4.000,"m","go test ./..."]',
  '[6.750,"o","ok\\r\\n"]',
  '[7.000,"m","exited with code 3"]',
  '',
].join('\n');

test('summarizeCast', async (t) => {
  const cases: { name: string; text: string; ticks: [number, number, string, string][]; duration: number }[] = [
    {
      name: 'commands and notes, in order, with their marker index',
      text: cast,
      ticks: [
        [0, 1.25, 'make build', 'command'],
        [1, 2, 'recording paused', 'note'],
        [2, 3.5, 'recording resumed', 'note'],
        [3, 4, 'go test ./...', 'command'],
        [4, 7, 'exited with code 3', 'note'],
      ],
      duration: 7,
    },
    { name: 'header only', text: '{"version":2,"width":80,"height":24}\n', ticks: [], duration: 0 },
    {
      name: 'a cut last line is skipped',
      text: '{"version":2,"width":80,"height":24}\n[0.5,"m","ls"]\n[0.9,"o","a\\r\\n"]\n[1.2,"m","exi',
      ticks: [[0, 0.5, 'ls', 'command']],
      duration: 0.9,
    },
    {
      name: 'malformed events are skipped',
      text: '{"version":2}\n[1,"m"]\n["x","m","a"]\n[2,"m",3]\n[3,"m","exited"]\n',
      ticks: [[0, 3, 'exited', 'note']],
      duration: 3,
    },
    { name: 'a command line that only starts like a note', text: '[1,"m","recordings-sync --all"]\n', ticks: [[0, 1, 'recordings-sync --all', 'command']], duration: 1 },
  ];
  for (const c of cases) {
    await t.test(c.name, () => {
      const got = summarizeCast(c.text);
      assert.deepEqual(
        got.ticks.map((x) => [x.index, x.time, x.label, x.kind]),
        c.ticks,
        `ticks of ${JSON.stringify(c.text)}`,
      );
      assert.equal(got.duration, c.duration, `duration of ${JSON.stringify(c.text)}`);
    });
  }
});

test('formatClock', () => {
  const cases: [number, string][] = [
    [0, '0:00'],
    [7.9, '0:07'],
    [723, '12:03'],
    [3723, '1:02:03'],
    [-1, '0:00'],
  ];
  for (const [s, want] of cases) assert.equal(formatClock(s), want, `formatClock(${s})`);
});

test('exitSummary', () => {
  const cases: [boolean, number | undefined, number, string][] = [
    [true, 3, 4.2, 'Exited with code 3 · 4.2 s'],
    [true, 0, 75, 'Exited with code 0 · 1m 15s'],
    [true, undefined, 0.5, 'Exited · 500 ms'],
    [false, undefined, 12, 'Still running (recorded so far) · 12 s'],
  ];
  for (const [exited, code, d, want] of cases) assert.equal(exitSummary(exited, code, d), want, `exitSummary(${exited}, ${code}, ${d})`);
});

test('summarizeCast: the widest and tallest size', () => {
  const cases: [string, string, number, number][] = [
    ['the header', '{"version":2,"width":200,"height":50}\n[0.1,"o","x"]\n', 200, 50],
    ['a resize wider than the header', cast, 100, 30],
    ['no header', '[1,"m","ls"]\n', 0, 0],
  ];
  for (const [name, text, cols, rows] of cases) {
    const got = summarizeCast(text);
    assert.deepEqual([got.cols, got.rows], [cols, rows], name);
  }
});

test('playerFit', () => {
  const cases: [string, { w: number; h: number }, number, number, string][] = [
    ['80×24 in a wide pane fits', { w: 1000, h: 600 }, 80, 24, 'both'],
    ['200 columns in 348 px stays legible and scrolls', { w: 348, h: 500 }, 200, 50, 'none'],
    ['200 columns in a full-width pane fits its width', { w: 1240, h: 400 }, 200, 50, 'width'],
    ['200×50 on a big screen fits', { w: 1900, h: 1000 }, 200, 50, 'both'],
    ['unknown size fits', { w: 348, h: 500 }, 0, 0, 'both'],
  ];
  for (const [name, box, cols, rows, want] of cases) assert.equal(playerFit(box, cols, rows), want, name);
});
