// The open terminal views: one per terminal URI, created on open, subscribed
// to its channel, placed in the editor area, and closed (unsubscribed) when
// the tab closes or the terminal is gone.

import { RpcError } from '../ahp/client';
import type { MultiHostClient } from '../ahp/multihost';
import { terminalUri, type TerminalState } from '../ahp/types';
import { hostUri } from '../ahp/hosts';
import type { EditorArea, EditorGroup } from './editor';
import { newTerminalId } from './format';
import { keyboardIdle } from './dom';
import type { Notify } from './quickinput';
import { TerminalView, type ViewHost } from './terminal/terminalView';

export interface ViewsHost {
  readonly client: MultiHostClient;
  readonly role: string;
  readonly clientId: string;
  notify: Notify;
  /** The set of open views or their tabs changed (save the layout …). */
  viewsChanged(): void;
  /** A view was closed. */
  viewClosed(): void;
  /** The name a terminal is shown by, if it has one yet. */
  knownTitle(uri: string): string | undefined;
}

/** Resolves once the client is online (at once if it is). */
function whenOnline(client: MultiHostClient): Promise<void> {
  if (client.online) return Promise.resolve();
  return new Promise((resolve) => {
    const off = client.on('state', (s) => {
      if (s !== 'online') return;
      off();
      resolve();
    });
  });
}

/** Resolves once another host's link is up (at once if it is). */
function whenHostOnline(client: MultiHostClient, host: string): Promise<void> {
  const probe = hostUri(host, ROOT_PROBE);
  if (client.onlineFor(probe)) return Promise.resolve();
  return new Promise((resolve) => {
    const off = client.on('hosts', () => {
      if (!client.onlineFor(probe)) return;
      off();
      resolve();
    });
  });
}

/** Any URI of a host names it for the client's routing. */
const ROOT_PROBE = 'ahp-terminal:/-';

export class TerminalViews {
  #views = new Map<string, TerminalView>();
  #editor: EditorArea;
  #host: ViewsHost;
  #viewHost: ViewHost;
  /** A New Terminal asked for before the link was up: one at a time. */
  #queuedCreate: Promise<void> | undefined;

  constructor(editor: EditorArea, host: ViewsHost, viewHost: ViewHost) {
    this.#editor = editor;
    this.#host = host;
    this.#viewHost = viewHost;
  }

  get(uri: string): TerminalView | undefined {
    return this.#views.get(uri);
  }

  has(uri: string): boolean {
    return this.#views.has(uri);
  }

  all(): IterableIterator<TerminalView> {
    return this.#views.values();
  }

  #viewFor(uri: string): TerminalView {
    let v = this.#views.get(uri);
    if (!v) {
      v = new TerminalView(uri, this.#viewHost);
      this.#views.set(uri, v);
    }
    return v;
  }

  /** Open (subscribe and show) a terminal; `toSide`: in a group to the right. */
  open(uri: string, toSide = false, focus = true): TerminalView {
    const existing = this.#views.get(uri);
    const v = this.#viewFor(uri);
    let group: EditorGroup | undefined;
    if (toSide) {
      const cur = this.#editor.groupOf(v);
      if (cur) {
        this.#editor.moveToNewGroup(v, cur);
        return v;
      }
      group = this.#editor.splitGroup();
    }
    this.#editor.open(v, group, focus);
    if (!existing) this.#subscribe(v, focus);
    return v;
  }

  /** Show an open view in its group. */
  focus(v: TerminalView): void {
    this.#editor.open(v, this.#editor.groupOf(v));
  }

  /**
   * Create a terminal sized to its new pane, claimed by us (owner only), and
   * focus it. Asked for while connecting (or reconnecting), it is created
   * once the link is up: never lost silently (`quiet`: no notice, for the
   * startup terminal, which the page asks for while it connects). `host`:
   * on another host ("" the home host).
   */
  create(toSide = false, quiet = false, host = ''): Promise<void> {
    const { client, role, notify } = this.#host;
    if (role !== 'owner') return Promise.resolve();
    if (client.onlineFor(hostUri(host, ROOT_PROBE))) return this.#create(toSide, host);
    if (this.#queuedCreate) return this.#queuedCreate;
    if (!quiet) notify('info', `Not connected${host ? ` to ${host}` : ''} yet: the new terminal opens once the connection is up.`);
    this.#queuedCreate = (host ? whenHostOnline(client, host) : whenOnline(client)).then(() => {
      this.#queuedCreate = undefined;
      return this.#create(toSide, host);
    });
    return this.#queuedCreate;
  }

  async #create(toSide: boolean, host: string): Promise<void> {
    const { client, clientId, notify } = this.#host;
    const uri = hostUri(host, terminalUri(newTerminalId()));
    const group = toSide && this.#editor.views.length > 0 ? this.#editor.splitGroup() : undefined;
    const v = this.#viewFor(uri);
    this.#editor.open(v, group);
    const size = v.proposeSize() ?? { cols: 80, rows: 24 };
    try {
      await client.createTerminal({ channel: uri, claim: { kind: 'client', clientId }, cols: size.cols, rows: size.rows });
      this.#subscribe(v);
      this.#host.viewsChanged();
      // The click or key that asked for it may have moved the keyboard
      // meanwhile (a re-rendered side bar drops its button's focus).
      if (this.#editor.activeView === v && !document.querySelector('.dialog-overlay, .quick-input-widget:not([hidden])')) v.focus();
    } catch (e) {
      notify('error', `Could not create a terminal: ${(e as Error).message}`);
      this.close(v, false);
    }
  }

  #subscribe(v: TerminalView, focus = false): void {
    this.#host.client.subscribe(v.uri).then(
      (st) => {
        // The snapshot event already drew it; make sure on a cached mirror too.
        if (!v.loaded && st) v.onSnapshot(st as TerminalState, (id) => this.#host.client.commandMeta(v.uri, id));
        // Opened to be used (the side bar, the palette): the keyboard goes
        // to it once it is drawn, unless it has gone elsewhere meanwhile.
        if (focus && this.#editor.activeView === v && !document.querySelector('.dialog-overlay, .quick-input-widget:not([hidden])') && (keyboardIdle() || document.activeElement?.closest('#sidebar'))) v.focus();
      },
      (e) => {
        if (this.#views.get(v.uri) !== v) return;
        const notFound = e instanceof RpcError || String(e).includes('not found');
        if (notFound) {
          const name = this.#host.knownTitle(v.uri);
          this.#host.notify('error', name ? `The terminal “${name}” was not found on the server.` : 'A terminal you opened was not found on the server.');
          this.close(v, false);
        }
      },
    );
  }

  /** Close a view; `unsubscribe` false when the terminal is gone anyway. */
  close(v: TerminalView, unsubscribe = true): void {
    if (this.#views.get(v.uri) !== v) return;
    this.#views.delete(v.uri);
    this.#editor.close(v);
    v.dispose();
    if (unsubscribe) this.#host.client.unsubscribe(v.uri);
    this.#host.viewsChanged();
    this.#host.viewClosed();
  }
}
