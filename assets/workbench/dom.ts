// Tiny DOM helpers: no framework, just typed element construction.

type Attrs = Record<string, string | number | boolean | undefined | null | EventListener>;
type Child = Node | string | null | undefined | false;

/** h('div.a.b', {title: 'x', onclick: fn}, child, …) */
export function h<K extends keyof HTMLElementTagNameMap>(spec: K | `${K}.${string}` | `${K}#${string}`, attrs?: Attrs | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const parts = spec.match(/^[a-z0-9]+|[.#][^.#]+/gi) ?? [];
  const el = document.createElement(parts[0] as K);
  const classes: string[] = [];
  for (const p of parts.slice(1)) {
    if (p[0] === '#') el.id = p.slice(1);
    else classes.push(p.slice(1));
  }
  if (classes.length) el.className = classes.join(' ');
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v as EventListener);
      else if (k === 'class') el.className = [el.className, String(v)].filter(Boolean).join(' ');
      else if (v === true) el.setAttribute(k, '');
      else el.setAttribute(k, String(v));
    }
  }
  append(el, ...children);
  return el;
}

export function append(el: Node, ...children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
  }
}

export function clear(el: Element): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}

/**
 * Puts drawn's children in el in place of its own, unless they are equal:
 * a redraw that changes nothing leaves the page alone. (A button taken out
 * of the page between its press and its release, even to be put back, loses
 * the click; a hovered or focused element keeps its state.)
 */
export function patchChildren(el: Element, drawn: Element): void {
  const now = el.childNodes;
  const next = drawn.childNodes;
  if (now.length === next.length && [...now].every((c, i) => c.isEqualNode(next[i]))) return;
  el.replaceChildren(...next);
}

/**
 * Each icon parsed once (by class and markup) into a template element; svg()
 * hands out deep copies of it. Parsing markup is what made drawing a long list slow
 * (five icons a row): a copy costs a fraction of it. The icons are a fixed
 * set; the bound only keeps a caller passing changing markup from growing
 * the map.
 */
const parsedIcons = new Map<string, Map<string, HTMLTemplateElement>>();
let parsedCount = 0;
const maxParsedIcons = 256;

/** An element from an SVG string (icons): a fresh copy every call. */
export function svg(markup: string, cls = 'codicon'): HTMLElement {
  // By markup, then class: the icons' strings are constants, so no key is built per call.
  let byClass = parsedIcons.get(markup);
  let tpl = byClass?.get(cls);
  if (!tpl) {
    const span = document.createElement('span');
    span.className = cls;
    span.setAttribute('aria-hidden', 'true');
    span.innerHTML = markup;
    tpl = document.createElement('template');
    tpl.content.append(span);
    if (parsedCount < maxParsedIcons) {
      if (!byClass) parsedIcons.set(markup, (byClass = new Map()));
      byClass.set(cls, tpl);
      parsedCount++;
    }
  }
  // A deep clone made in this document (no adoption when it is put in).
  return document.importNode(tpl.content.firstChild!, true) as HTMLElement;
}

/**
 * Makes nodes el's children, in that order, moving only what is out of
 * place: a child that stays where it was is never taken out of the page (it
 * keeps the keyboard, the pointer's hover and a click in progress), one that
 * is no longer wanted is removed, and a new one is put in its place.
 */
export function placeChildren(el: Element, nodes: readonly Node[]): void {
  const wanted = new Set(nodes);
  let cur = el.firstChild;
  const drop = () => {
    const next = cur!.nextSibling;
    el.removeChild(cur!);
    cur = next;
  };
  for (const n of nodes) {
    while (cur && cur !== n && !wanted.has(cur)) drop();
    if (cur === n) cur = cur.nextSibling;
    else el.insertBefore(n, cur);
  }
  while (cur) drop();
}

export function isMac(): boolean {
  return /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);
}

/** Primary modifier: Cmd on macOS, Ctrl elsewhere. */
export function primary(e: KeyboardEvent | MouseEvent): boolean {
  return isMac() ? e.metaKey : e.ctrlKey;
}

export function keyLabel(k: string): string {
  if (!isMac()) return k;
  return k.replace(/Ctrl\+/g, '⌘').replace(/Shift\+/g, '⇧').replace(/Alt\+/g, '⌥');
}

/** Dispatched on the document when a picker or dialog closes (the workbench gives the keyboard back to the terminal). */
export const OVERLAY_CLOSED = 'termhost:overlayclosed';

export function overlayClosed(): void {
  document.dispatchEvent(new Event(OVERLAY_CLOSED));
}

/** Nothing visible holds the keyboard: the body, or an element just removed or hidden. */
export function keyboardIdle(): boolean {
  const a = document.activeElement as HTMLElement | null;
  return !a || a === document.body || !a.isConnected || a.getClientRects().length === 0;
}

/**
 * Keeps Tab and Shift+Tab inside a modal dialog (never in a terminal behind
 * it): focus cycles through its visible controls.
 */
function trapTab(box: HTMLElement, e: KeyboardEvent): void {
  const f = [...box.querySelectorAll<HTMLElement>('select, input, button:not([disabled])')].filter((el) => !el.closest('[hidden]'));
  if (!f.length) return;
  const i = f.indexOf(document.activeElement as HTMLElement);
  const next = e.shiftKey ? (i <= 0 ? f.length - 1 : i - 1) : i < 0 || i === f.length - 1 ? 0 : i + 1;
  e.preventDefault();
  f[next]!.focus();
}

/**
 * The keydown listener of a modal dialog (add it in the capture phase):
 * Escape closes it, Tab stays inside it.
 */
export function dialogKeys(box: HTMLElement, close: () => void): (e: KeyboardEvent) => void {
  return (e) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      close();
    } else if (e.key === 'Tab') {
      trapTab(box, e);
    }
  };
}
