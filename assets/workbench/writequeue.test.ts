import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WriteQueue, type WriteSink } from './writequeue';

/** A sink that parses only when told to, like xterm's async parser. */
class Sink implements WriteSink {
  parsed = '';
  waiting: { data: string; cb: () => void }[] = [];
  write(data: string, cb: () => void) {
    this.waiting.push({ data, cb });
  }
  parseOne() {
    const w = this.waiting.shift()!;
    this.parsed += w.data;
    w.cb();
  }
  parseAll() {
    while (this.waiting.length) this.parseOne();
  }
  get unparsed() {
    return this.waiting.reduce((n, w) => n + w.data.length, 0);
  }
}

test('unparsed data handed to xterm stays below the high-water mark', () => {
  const sink = new Sink();
  const q = new WriteQueue(sink, 100, 30);
  q.write('x'.repeat(1000));
  assert.ok(sink.unparsed <= 100, `unparsed ${sink.unparsed}`);
  assert.ok(q.queued > 0);
  let max = 0;
  while (sink.waiting.length) {
    max = Math.max(max, sink.unparsed);
    sink.parseOne();
  }
  assert.ok(max <= 100);
  assert.equal(sink.parsed, 'x'.repeat(1000));
  assert.ok(q.idle);
});

test('then() runs after earlier data is parsed, in order', () => {
  const sink = new Sink();
  const q = new WriteQueue(sink, 100, 30);
  const seen: string[] = [];
  q.write('abc');
  q.then(() => seen.push('after abc: ' + sink.parsed));
  q.write('def');
  q.then(() => seen.push('after def: ' + sink.parsed));
  assert.deepEqual(seen, []);
  sink.parseAll();
  assert.deepEqual(seen, ['after abc: abc', 'after def: abcdef']);
});

test('then() on an idle queue runs at once', () => {
  const q = new WriteQueue(new Sink());
  let ran = false;
  q.then(() => (ran = true));
  assert.ok(ran);
});

test('surrogate pairs are never split across chunks', () => {
  const sink = new Sink();
  const q = new WriteQueue(sink, 1000, 3);
  q.write('ab😀cd😀');
  for (const w of sink.waiting) assert.ok(!/[\uD800-\uDBFF]$/.test(w.data), JSON.stringify(w.data));
  sink.parseAll();
  assert.equal(sink.parsed, 'ab😀cd😀');
});

test('discardQueued drops waiting data but a later then() still waits for in-flight chunks', () => {
  const sink = new Sink();
  const q = new WriteQueue(sink, 10, 10);
  q.write('0123456789abcdefghij');
  q.discardQueued();
  let at = '';
  q.then(() => (at = sink.parsed));
  assert.equal(at, '');
  sink.parseAll();
  assert.equal(at, '0123456789');
  assert.equal(sink.parsed, '0123456789');
});

test('parsingReplay names the chunk being parsed, in order, across chunk splits', () => {
  const sink = new Sink();
  const q = new WriteQueue(sink, 100, 30);
  const seen: [string, boolean][] = [];
  // The parser asks while it parses each chunk, as xterm's hooks do.
  const parse = () => {
    const w = sink.waiting[0]!;
    seen.push([w.data, q.parsingReplay]);
    sink.parseOne();
  };
  q.write('h'.repeat(40), true); // history, split in two chunks
  q.write('live');
  q.write('old', true);
  q.then(() => seen.push(['then', q.parsingReplay]));
  q.write('new');
  while (sink.waiting.length) parse();
  assert.deepEqual(seen, [
    ['h'.repeat(30), true],
    ['h'.repeat(10), true],
    ['live', false],
    ['old', true],
    ['then', false],
    ['new', false],
  ]);
  assert.equal(q.parsingReplay, false);
});

test('discardQueued keeps the flags of chunks xterm still parses', () => {
  const sink = new Sink();
  const q = new WriteQueue(sink, 10, 10);
  q.write('a'.repeat(10), true);
  q.write('b'.repeat(10));
  q.discardQueued(); // 'b' was never handed over
  assert.equal(q.parsingReplay, true);
  sink.parseAll();
  assert.equal(q.parsingReplay, false);
  assert.equal(sink.parsed, 'a'.repeat(10));
});
