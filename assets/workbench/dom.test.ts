import './testDom';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { h, placeChildren, svg } from './dom';
import { icons } from './icons';

/** Counts the markup parses (innerHTML set on any element) while fn runs. */
function countParses(fn: () => void): number {
  let proto: object | null = HTMLSpanElement.prototype;
  let desc: PropertyDescriptor | undefined;
  while (proto && !(desc = Object.getOwnPropertyDescriptor(proto, 'innerHTML'))) proto = Object.getPrototypeOf(proto);
  assert.ok(proto && desc?.set, 'innerHTML has a setter');
  let n = 0;
  Object.defineProperty(proto, 'innerHTML', {
    ...desc,
    set(v: string) {
      n++;
      desc!.set!.call(this, v);
    },
  });
  try {
    fn();
  } finally {
    Object.defineProperty(proto, 'innerHTML', desc!);
  }
  return n;
}

test('svg: every call gives a new element, equal to the first, from one parse of the markup', () => {
  let a: HTMLElement | undefined;
  const rest: HTMLElement[] = [];
  const parses = countParses(() => {
    a = svg(icons.terminal, 'codicon row-icon status-exited');
    for (let i = 0; i < 4; i++) rest.push(svg(icons.terminal, 'codicon row-icon status-exited'));
  });
  assert.equal(parses, 1, 'the markup is parsed once');
  for (const b of rest) {
    assert.notEqual(b, a, 'a distinct element');
    assert.ok(b.isEqualNode(a!), 'equal to the first');
  }
  // What the page gets, as before: a span of that class, hidden from screen readers, with the SVG inside.
  assert.equal(a!.tagName, 'SPAN');
  assert.equal(a!.className, 'codicon row-icon status-exited');
  assert.equal(a!.getAttribute('aria-hidden'), 'true');
  assert.equal(a!.firstElementChild?.namespaceURI, 'http://www.w3.org/2000/svg');
  assert.equal(a!.ownerDocument, document);
  // Changing one copy leaves the next ones alone.
  a!.classList.add('spin');
  a!.firstElementChild!.remove();
  const c = svg(icons.terminal, 'codicon row-icon status-exited');
  assert.ok(c.isEqualNode(rest[0]!));
});

test('svg: the class is part of the key; the default is codicon', () => {
  const plain = svg(icons.add);
  const other = svg(icons.add, 'codicon host-new');
  assert.equal(plain.className, 'codicon');
  assert.equal(other.className, 'codicon host-new');
  assert.ok(plain.firstElementChild!.isEqualNode(other.firstElementChild!));
});

test('placeChildren: children in place stay in the page; the rest are added, moved and removed', () => {
  const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((id) => h('div', { id }));
  const el = h('div', null, a, b, c);
  document.body.append(el);
  b!.tabIndex = 0;
  b!.focus();
  const seen = new MutationObserver(() => {});
  seen.observe(el, { childList: true });
  const removed = () => seen.takeRecords().flatMap((r) => [...r.removedNodes].map((n) => (n as Element).id));

  placeChildren(el, [b!, c!, d!]);
  assert.deepEqual([...el.children].map((x) => x.id), ['b', 'c', 'd']);
  assert.equal(document.activeElement, b, 'the focused child kept the keyboard');
  assert.deepEqual(removed(), ['a']);

  placeChildren(el, [b!, c!, d!]);
  assert.deepEqual(removed(), [], 'nothing changed, nothing touched');
  placeChildren(el, [a!, b!, d!]);
  assert.deepEqual([...el.children].map((x) => x.id), ['a', 'b', 'd']);
  assert.deepEqual(removed(), ['c']);
  placeChildren(el, [d!, b!]);
  assert.deepEqual([...el.children].map((x) => x.id), ['d', 'b']);
  assert.deepEqual(removed(), ['a', 'd'], 'd moved before b: b stayed');
  assert.equal(document.activeElement, b);
  placeChildren(el, []);
  assert.equal(el.childNodes.length, 0);
});
