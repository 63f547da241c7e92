// VS Code-style quick input: the command palette, quick pick lists and
// input boxes share one widget at the top of the window.

import { h, clear, svg, keyLabel, overlayClosed } from './dom';

export interface QuickPickItem {
  label: string;
  description?: string;
  detail?: string;
  icon?: string;
  keybinding?: string;
  /** Separator label shown above this item. */
  group?: string;
  picked?: boolean;
}

interface PickOptions<T extends QuickPickItem = QuickPickItem> {
  placeholder?: string;
  value?: string;
  /** Called when the typed value starts with another mode's prefix. */
  onValue?: (v: string) => boolean;
  matchOnDescription?: boolean;
  title?: string;
  /** With a query, list the items by this (lower first; ties keep their order). */
  rank?: (item: T, query: string) => number;
}

interface InputOptions {
  placeholder?: string;
  prompt?: string;
  value?: string;
  title?: string;
  validate?: (v: string) => string | undefined;
}

/** Does `query` match `text` as a subsequence of words? Returns match ranges. */
export function fuzzyMatch(query: string, text: string): [number, number][] | undefined {
  const q = query.trim().toLowerCase();
  if (!q) return [];
  const t = text.toLowerCase();
  // contiguous first
  const i = t.indexOf(q);
  if (i >= 0) return [[i, i + q.length]];
  // then every word of the query in order
  const ranges: [number, number][] = [];
  let from = 0;
  for (const w of q.split(/\s+/)) {
    const j = t.indexOf(w, from);
    if (j < 0) return undefined;
    ranges.push([j, j + w.length]);
    from = j + w.length;
  }
  return ranges;
}

function highlighted(text: string, ranges: [number, number][]): HTMLElement {
  const span = h('span.label-name');
  let at = 0;
  for (const [a, b] of ranges) {
    if (a > at) span.append(text.slice(at, a));
    span.append(h('span.highlight', null, text.slice(a, b)));
    at = b;
  }
  span.append(text.slice(at));
  return span;
}

export class QuickInput {
  readonly element: HTMLElement;
  #input: HTMLInputElement;
  #list: HTMLElement;
  #message: HTMLElement;
  #title: HTMLElement;
  #resolve: ((v: unknown) => void) | undefined;
  #items: QuickPickItem[] = [];
  #visible: { item: QuickPickItem; el: HTMLElement }[] = [];
  #active = 0;
  #mode: 'pick' | 'input' = 'pick';
  #pickOpts: PickOptions = {};
  #inputOpts: InputOptions = {};
  #restoreFocus: HTMLElement | null = null;

  constructor() {
    this.#input = h('input.quick-input-box', { type: 'text', spellcheck: 'false', 'aria-autocomplete': 'list', role: 'combobox', 'aria-controls': 'quick-input-list' });
    this.#list = h('div.quick-input-list#quick-input-list', { role: 'listbox' });
    this.#message = h('div.quick-input-message');
    this.#title = h('div.quick-input-title');
    this.element = h('div.quick-input-widget', { hidden: true, role: 'dialog', 'aria-label': 'Quick Input' }, this.#title, h('div.quick-input-header', null, this.#input), this.#message, this.#list);
    this.#input.addEventListener('input', () => this.#onInput());
    this.#input.addEventListener('keydown', (e) => this.#onKey(e));
    this.#input.addEventListener('blur', () => {
      // Clicking an item blurs the input first; let the click land.
      setTimeout(() => {
        if (!this.element.contains(document.activeElement) && !this.element.hidden) this.#finish(undefined);
      }, 150);
    });
  }

  get open(): boolean {
    return !this.element.hidden;
  }

  pick<T extends QuickPickItem>(items: T[], o: PickOptions<T> = {}): Promise<T | undefined> {
    this.#finish(undefined);
    this.#mode = 'pick';
    this.#pickOpts = o as PickOptions;
    this.#items = items;
    this.#show(o.title, o.placeholder, o.value ?? '');
    this.#message.hidden = true;
    this.#list.hidden = false;
    this.#render();
    return new Promise((r) => (this.#resolve = r as (v: unknown) => void));
  }

  /** Replace the items of the open pick (e.g. switching palette modes). */
  setItems(items: QuickPickItem[], placeholder?: string): void {
    this.#items = items;
    if (placeholder !== undefined) this.#input.placeholder = placeholder;
    this.#render();
  }

  input(o: InputOptions = {}): Promise<string | undefined> {
    this.#finish(undefined);
    this.#mode = 'input';
    this.#inputOpts = o;
    this.#items = [];
    this.#show(o.title, o.placeholder, o.value ?? '');
    this.#list.hidden = true;
    this.#message.hidden = false;
    this.#validate();
    this.#input.select();
    return new Promise((r) => (this.#resolve = r as (v: unknown) => void));
  }

  #show(title: string | undefined, placeholder: string | undefined, value: string): void {
    if (!this.open) this.#restoreFocus = document.activeElement as HTMLElement | null;
    this.element.hidden = false;
    this.#title.textContent = title ?? '';
    this.#title.hidden = !title;
    this.#input.placeholder = placeholder ?? '';
    this.#input.value = value;
    this.#input.focus();
  }

  #finish(v: unknown): void {
    const r = this.#resolve;
    this.#resolve = undefined;
    if (!r) return;
    this.element.hidden = true;
    clear(this.#list);
    r(v);
    const back = this.#restoreFocus;
    this.#restoreFocus = null;
    if (v === undefined && back && back.isConnected) back.focus();
    overlayClosed();
  }

  cancel(): void {
    this.#finish(undefined);
  }

  #onInput(): void {
    if (this.#mode === 'input') {
      this.#validate();
      return;
    }
    if (this.#pickOpts.onValue?.(this.#input.value)) return;
    this.#active = 0;
    this.#render();
  }

  #validate(): string | undefined {
    const o = this.#inputOpts;
    const err = o.validate?.(this.#input.value);
    this.#message.textContent = err ?? o.prompt ?? "Press 'Enter' to confirm or 'Escape' to cancel";
    this.#message.classList.toggle('error', !!err);
    return err;
  }

  /** The query without a mode prefix (">" for commands). */
  #query(): string {
    const v = this.#input.value;
    return v.startsWith('>') ? v.slice(1) : v;
  }

  #render(): void {
    clear(this.#list);
    this.#visible = [];
    const q = this.#query();
    let lastGroup: string | undefined;
    const matched: { item: QuickPickItem; ranges: [number, number][] }[] = [];
    for (const item of this.#items) {
      let ranges = fuzzyMatch(q, item.label);
      if (!ranges && this.#pickOpts.matchOnDescription && item.description && fuzzyMatch(q, item.description)) ranges = [];
      if (ranges) matched.push({ item, ranges });
    }
    const rank = this.#pickOpts.rank;
    if (rank && q.trim()) {
      const r = new Map(matched.map((m) => [m.item, rank(m.item, q)]));
      matched.sort((x, y) => r.get(x.item)! - r.get(y.item)!);
    }
    for (const { item, ranges } of matched) {
      const el = h(
        'div.quick-input-list-entry',
        { role: 'option', 'aria-selected': 'false' },
        item.icon ? svg(item.icon) : null,
        h('div.quick-input-list-label', null, highlighted(item.label, ranges), item.description ? h('span.label-description', null, item.description) : null),
        item.keybinding ? h('span.keybinding', null, ...keyLabel(item.keybinding).split(' ').map((k) => h('kbd', null, k))) : null,
      );
      if (item.group && item.group !== lastGroup && !q) {
        el.classList.add('has-separator');
        el.append(h('span.quick-input-separator', null, item.group));
      }
      lastGroup = item.group;
      el.addEventListener('mousedown', (e) => e.preventDefault());
      el.addEventListener('click', () => this.#finish(item));
      el.addEventListener('mousemove', () => this.#setActive(this.#visible.findIndex((v) => v.item === item)));
      this.#list.append(el);
      this.#visible.push({ item, el });
    }
    if (this.#visible.length === 0) this.#list.append(h('div.quick-input-empty', null, 'No matching results'));
    this.#setActive(Math.min(this.#active, this.#visible.length - 1));
  }

  #setActive(i: number): void {
    if (i < 0 || i >= this.#visible.length) return;
    this.#visible[this.#active]?.el.classList.remove('focused');
    this.#visible[this.#active]?.el.setAttribute('aria-selected', 'false');
    this.#active = i;
    const el = this.#visible[i]!.el;
    el.classList.add('focused');
    el.setAttribute('aria-selected', 'true');
    el.scrollIntoView({ block: 'nearest' });
  }

  #onKey(e: KeyboardEvent): void {
    if (e.key === 'Escape') {
      e.preventDefault();
      this.#finish(undefined);
      return;
    }
    if (e.key === 'Enter') {
      e.preventDefault();
      if (this.#mode === 'input') {
        if (!this.#validate()) this.#finish(this.#input.value);
      } else {
        const v = this.#visible[this.#active];
        if (v) this.#finish(v.item);
      }
      return;
    }
    if (this.#mode !== 'pick') return;
    const n = this.#visible.length;
    if (!n) return;
    if (e.key === 'ArrowDown') this.#setActive((this.#active + 1) % n);
    else if (e.key === 'ArrowUp') this.#setActive((this.#active - 1 + n) % n);
    else if (e.key === 'PageDown') this.#setActive(Math.min(n - 1, this.#active + 10));
    else if (e.key === 'PageUp') this.#setActive(Math.max(0, this.#active - 10));
    else return;
    e.preventDefault();
  }
}

/** Modal dialog (confirmations). */
export function confirmDialog(o: { message: string; detail?: string; preview?: string; primary: string; icon?: string; severity?: 'info' | 'warning' }): Promise<boolean> {
  return new Promise((resolve) => {
    const restore = document.activeElement as HTMLElement | null;
    const done = (v: boolean) => {
      overlay.remove();
      document.removeEventListener('keydown', onKey, true);
      restore?.focus();
      resolve(v);
      overlayClosed();
    };
    // The key that opened the dialog (Enter in the palette) may still send its
    // keypress to the button just focused: a click from the keyboard counts
    // only after a key went down in the dialog.
    let keyDown = false;
    const click = (v: boolean) => (e: Event) => {
      if ((e as MouseEvent).detail > 0 || keyDown) done(v);
    };
    const ok = h('button.button.primary', { type: 'button', onclick: click(true) }, o.primary);
    const cancel = h('button.button.secondary', { type: 'button', onclick: click(false) }, 'Cancel');
    const box = h(
      'div.dialog-box',
      { role: 'alertdialog', 'aria-modal': 'true', 'aria-label': o.message },
      h(
        'div.dialog-message-row',
        null,
        o.icon ? svg(o.icon, `codicon dialog-icon ${o.severity ?? 'info'}`) : null,
        h('div.dialog-message-container', null, h('div.dialog-message', null, o.message), o.detail ? h('div.dialog-detail', null, o.detail) : null, o.preview ? h('pre.dialog-preview', null, o.preview) : null),
      ),
      h('div.dialog-buttons', null, ok, cancel),
    );
    const overlay = h('div.dialog-overlay', null, box);
    const onKey = (e: KeyboardEvent) => {
      keyDown = true;
      if (e.key === 'Escape') {
        e.preventDefault();
        e.stopPropagation();
        done(false);
      } else if (e.key === 'Enter' && document.activeElement !== cancel) {
        e.preventDefault();
        e.stopPropagation();
        done(true);
      }
    };
    document.addEventListener('keydown', onKey, true);
    document.body.append(overlay);
    ok.focus();
  });
}

/**
 * Show a notification toast (Workbench.notify). With a `key` it stays until
 * one of its actions runs, it is closed, or dismiss(key) takes it away (a
 * question that waits for an answer, such as a request for control).
 */
export type Notify = (kind: 'info' | 'error' | 'warning', message: string, actions?: { label: string; run: () => void }[], key?: string) => void;

/** Notification toasts, bottom right. */
export class Notifications {
  readonly element = h('div.notifications-toasts', { 'aria-live': 'polite' });

  show(kind: 'info' | 'warning' | 'error', message: string, icon: string, actions: { label: string; run: () => void }[] = [], key?: string): void {
    if (key !== undefined) this.dismiss(key);
    const close = () => {
      toast.classList.add('closing');
      setTimeout(() => toast.remove(), 150);
    };
    const toast = h(
      'div.notification-toast',
      { role: kind === 'error' ? 'alert' : 'status', 'data-key': key },
      svg(icon, `codicon notification-icon ${kind}`),
      h('div.notification-message', null, message),
      h('div.notification-actions', null, ...actions.map((a) => h('button.button.secondary.small', { type: 'button', 'data-action': a.label, onclick: () => (a.run(), close()) }, a.label))),
      // A question stays until it is answered: no close button.
      key !== undefined ? null : h('button.icon-button.notification-close', { type: 'button', title: 'Clear Notification', onclick: close }, svg('<svg width="16" height="16" viewBox="0 0 16 16" fill="none" stroke="currentColor" stroke-width="1.1" stroke-linecap="round"><path d="M4 4l8 8M12 4l-8 8"/></svg>')),
    );
    this.element.append(toast);
    // Too many: the oldest goes, a question waiting for its answer last.
    while (this.element.children.length > 4) (this.element.querySelector(':scope > :not([data-key])') ?? this.element.firstElementChild)?.remove();
    if (key === undefined) setTimeout(close, kind === 'error' ? 12_000 : 6_000);
  }

  /** Take away the toast shown with key, if it is still there. */
  dismiss(key: string): void {
    for (const t of this.element.querySelectorAll<HTMLElement>(':scope > [data-key]')) if (t.dataset.key === key) t.remove();
  }
}
