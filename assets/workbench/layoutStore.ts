// The editor layout across reloads of this tab (session storage) and in the
// address bar: /t/<id> of the active terminal (/h/<host>/t/<id> of another
// host's), #<commandId> of a command link, revealed once that terminal's
// snapshot is on screen.

import { isTerminalChannel, terminalIdOf, terminalUri } from '../ahp/types';
import { deepLinkPath, hostUri, parseDeepLink, splitHostUri } from '../ahp/hosts';
import type { EditorArea } from './editor';
import type { TerminalView } from './terminal/terminalView';

export interface LayoutHost {
  readonly basePath: string;
  readonly role: string;
  /** The terminal of this page's URL ("" on the start page). */
  readonly terminalId: string;
  view(uri: string): TerminalView | undefined;
  open(uri: string, focus: boolean): void;
  focus(view: TerminalView): void;
}

const KEY = 'termhost.layout';

/** A terminal's page path below the base path: /t/<id>, or /h/<host>/t/<id> for another host's. */
function pathOf(uri: string): string {
  const { host, uri: own } = splitHostUri(uri);
  return deepLinkPath(host, terminalIdOf(own));
}

export class EditorLayoutStore {
  #editor: EditorArea;
  #host: LayoutHost;
  /** Saving starts once the saved layout is restored (not to overwrite it). */
  #restored = false;
  #pendingDeepLink: string | undefined;

  constructor(editor: EditorArea, host: LayoutHost) {
    this.#editor = editor;
    this.#host = host;
    this.#pendingDeepLink = location.hash.startsWith('#') && location.hash.length > 1 ? decodeURIComponent(location.hash.slice(1)) : undefined;
    window.addEventListener('hashchange', () => {
      const id = decodeURIComponent(location.hash.slice(1));
      if (id && this.#editor.activeView) this.#editor.activeView.revealCommand(id);
    });
  }

  save(): void {
    if (!this.#restored) return;
    sessionStorage.setItem(KEY, JSON.stringify(this.#editor.serialize()));
  }

  /** Reopen the saved groups and tabs (owner only), then focus the URL's terminal. */
  restore(): void {
    let saved: { groups?: string[][]; active?: string } = {};
    try {
      saved = JSON.parse(sessionStorage.getItem(KEY) ?? '{}');
    } catch {
      /* ignore */
    }
    const editor = this.#editor;
    const { role, terminalId } = this.#host;
    // Another host's terminal (/h/<host>/t/<id>) is opened on the owner's page only.
    const link = terminalId || role !== 'owner' ? undefined : parseDeepLink(location.pathname, this.#host.basePath);
    const target = terminalId ? terminalUri(terminalId) : link ? hostUri(link.host, terminalUri(link.id)) : undefined;
    // A share link grants one terminal: never restore others into its page.
    const groups = role !== 'owner' ? [] : Array.isArray(saved.groups) ? saved.groups.filter((g) => Array.isArray(g) && g.length) : [];
    groups.forEach((uris, gi) => {
      for (const uri of uris) {
        if (typeof uri !== 'string' || !isTerminalChannel(uri)) continue;
        if (gi > 0 && editor.groups.length <= gi) editor.splitGroup(editor.groups[editor.groups.length - 1]);
        const g = editor.groups[Math.min(gi, editor.groups.length - 1)]!;
        this.#host.open(uri, false);
        const v = this.#host.view(uri)!;
        if (editor.groupOf(v) !== g) editor.move(v, g, g.views.length);
      }
    });
    const focus = target ?? (role === 'owner' ? saved.active : undefined);
    if (focus) {
      const v = this.#host.view(focus);
      if (v) this.#host.focus(v);
      else this.#host.open(focus, true);
    }
    this.#restored = true;
    this.save();
    this.showInUrl(editor.activeView);
  }

  /** The page's command link (#id), once its terminal has a snapshot. */
  revealPendingDeepLink(v: TerminalView): void {
    if (!this.#pendingDeepLink) return;
    v.revealCommand(this.#pendingDeepLink);
    this.#pendingDeepLink = undefined;
  }

  /** Put the view (and a command of it) in the address bar, without a history entry. */
  showInUrl(view: TerminalView | undefined, commandId?: string): void {
    const base = this.#host.basePath;
    const path = view && base + pathOf(view.uri);
    if (path && commandId !== undefined) {
      history.replaceState(null, '', `${path}#${encodeURIComponent(commandId)}`);
      return;
    }
    const want = path ?? `${base}/`;
    if (location.pathname !== want) history.replaceState(null, '', want);
  }
}
