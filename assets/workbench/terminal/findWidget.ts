// The find widget over a terminal (VS Code's terminal find): incremental
// search with match case / whole word / regex toggles and a result count,
// on xterm's search addon.

import type { SearchAddon } from '@xterm/addon-search';
import { h, svg } from '../dom';
import { icons } from '../icons';
import type { Themes } from '../theme';

/** VS Code-style find widget over the terminal. */
export class FindWidget {
  readonly element: HTMLElement;
  #search: SearchAddon;
  #themes: Themes;
  #input: HTMLInputElement;
  #count: HTMLElement;
  #opts = { caseSensitive: false, wholeWord: false, regex: false };
  #toggles: Record<string, HTMLElement> = {};
  #onClose: () => void;

  constructor(search: SearchAddon, themes: Themes, onClose: () => void) {
    this.#search = search;
    this.#themes = themes;
    this.#onClose = onClose;
    this.#input = h('input.find-input', { type: 'text', placeholder: 'Find', 'aria-label': 'Find', spellcheck: 'false' });
    this.#count = h('div.find-count', null, 'No results');
    const toggle = (key: 'caseSensitive' | 'wholeWord' | 'regex', icon: string, title: string) => {
      const b = h('button.find-toggle', { type: 'button', title, 'aria-pressed': 'false', onclick: () => {
        this.#opts[key] = !this.#opts[key];
        b.setAttribute('aria-pressed', String(this.#opts[key]));
        b.classList.toggle('checked', this.#opts[key]);
        this.#run(true);
        this.#input.focus();
      } }, svg(icon));
      this.#toggles[key] = b;
      return b;
    };
    this.element = h(
      'div.find-widget',
      { hidden: true, role: 'dialog', 'aria-label': 'Find in terminal' },
      h('div.find-field', null, this.#input, toggle('caseSensitive', icons.caseSensitive, 'Match Case'), toggle('wholeWord', icons.wholeWord, 'Match Whole Word'), toggle('regex', icons.regex, 'Use Regular Expression')),
      this.#count,
      h('button.icon-button', { type: 'button', title: 'Previous Match (Shift+Enter)', onclick: () => this.#run(false, true) }, svg(icons.arrowUp)),
      h('button.icon-button', { type: 'button', title: 'Next Match (Enter)', onclick: () => this.#run(false) }, svg(icons.arrowDown)),
      h('button.icon-button', { type: 'button', title: 'Close (Escape)', onclick: () => this.close() }, svg(icons.close)),
    );
    this.#input.addEventListener('input', () => this.#run(true));
    this.#input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') {
        e.preventDefault();
        this.#run(false, e.shiftKey);
      } else if (e.key === 'Escape') {
        e.preventDefault();
        this.close();
      }
    });
    search.onDidChangeResults(({ resultIndex, resultCount }) => {
      if (!this.#input.value) this.#count.textContent = 'No results';
      else if (resultCount === 0) this.#count.textContent = 'No results';
      else if (resultIndex < 0) this.#count.textContent = `${resultCount >= 2000 ? '2000+' : resultCount} results`;
      else this.#count.textContent = `${resultIndex + 1} of ${resultCount >= 2000 ? '2000+' : resultCount}`;
      this.element.classList.toggle('no-results', !!this.#input.value && resultCount === 0);
    });
  }

  #decorations() {
    const c = this.#themes.colors;
    const hc = this.#themes.kind.startsWith('hc');
    return {
      matchBackground: hc ? undefined : c.searchMatch,
      matchBorder: hc ? c.ruler : undefined,
      matchOverviewRuler: c.ruler,
      activeMatchBackground: hc ? undefined : c.searchActive,
      activeMatchBorder: hc ? c.ruler : '#ffffff00',
      activeMatchColorOverviewRuler: c.ruler,
    };
  }

  #run(incremental: boolean, back = false): void {
    const q = this.#input.value;
    if (!q) {
      this.#search.clearDecorations();
      this.#count.textContent = 'No results';
      this.element.classList.remove('no-results');
      return;
    }
    const opts = { ...this.#opts, incremental, decorations: this.#decorations() };
    try {
      if (back) this.#search.findPrevious(q, opts);
      else this.#search.findNext(q, opts);
    } catch {
      this.#count.textContent = 'Invalid pattern';
    }
  }

  open(selection: string): void {
    this.element.hidden = false;
    if (selection && !selection.includes('\n')) this.#input.value = selection;
    this.#input.focus();
    this.#input.select();
    if (this.#input.value) this.#run(true);
  }

  close(): void {
    this.element.hidden = true;
    this.#search.clearDecorations();
    this.#onClose();
  }

  applyTheme(): void {
    if (!this.element.hidden && this.#input.value) this.#run(true);
  }
}
