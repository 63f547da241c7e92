// The workbench: wires the AHP client to the side bar, editor area, status
// bar, command palette and terminal views.

import { AhpClient, CloseCodes, RpcError, type ConnectionState, type StateDetail } from '../ahp/client';
import { ROOT_CHANNEL, hasExited, exitCodeOf, terminalIdOf, terminalUri, type ActionEnvelope, type RootState, type TerminalInfo, type TerminalState } from '../ahp/types';
import { h, clear, svg, primary, isMac, keyLabel } from './dom';
import { icons } from './icons';
import { Themes, themeLabels, type ThemeSetting } from './theme';
import { TerminalView, commandStatus, type CommandRecord, type ViewHost } from './terminalView';
import { EditorArea, type EditorGroup, type EditorHost } from './editor';
import { Sidebar, type SidebarHost } from './sidebar';
import { QuickInput, Notifications, confirmDialog, type QuickPickItem } from './quickinput';
import { BuildIndicator, BackgroundNotifier, type BuildStatus } from './buildstatus';
import { claimLabel, cwdLabel, formatDuration, newTerminalId } from './format';
import { accessLost, accessProbeUrl, revokedMessage, roleDescriptions, roleLabels, type Role } from './access';
import { openShareDialog } from './share';
import { clipboardWriteAllowed, setClipboardWriteAllowed } from './settings';

export interface AppConfig {
  basePath: string;
  terminalId: string;
  version: string;
  role: Role;
  /** The Unix account and host the shells run as (owner pages only; "" if unknown). */
  serverUser: string;
  serverHost: string;
}

interface Keybinding {
  primary?: boolean;
  shift?: boolean;
  alt?: boolean;
  code: string;
}

interface Action {
  id: string;
  category: string;
  title: string;
  key?: string;
  /** Also taken from a focused terminal (like VS Code's commandsToSkipShell). */
  inTerminal?: boolean;
  when?: () => boolean;
  /** Current state of a setting, shown next to it in the palette. */
  state?: () => string;
  run: () => void | Promise<void>;
}

function parseKey(k: string): Keybinding {
  const parts = k.split('+');
  const code = parts.pop()!;
  const map: Record<string, string> = { '`': 'Backquote', Up: 'ArrowUp', Down: 'ArrowDown', '\\': 'Backslash', F1: 'F1', PageUp: 'PageUp', PageDown: 'PageDown' };
  return {
    primary: parts.includes('Ctrl'),
    shift: parts.includes('Shift'),
    alt: parts.includes('Alt'),
    code: map[code] ?? (/^\d$/.test(code) ? 'Digit' + code : 'Key' + code.toUpperCase()),
  };
}

function matches(e: KeyboardEvent, b: Keybinding): boolean {
  if (e.code !== b.code) return false;
  if (!!b.primary !== primary(e) || !!b.shift !== e.shiftKey || !!b.alt !== e.altKey) return false;
  // The other modifier must not be down (Ctrl on macOS, Meta elsewhere).
  return isMac() ? !e.ctrlKey : !e.metaKey;
}

export class Workbench implements ViewHost, EditorHost, SidebarHost {
  readonly client: AhpClient;
  readonly themes = new Themes();
  readonly config: AppConfig;
  readonly role: Role;
  readonly clientId: string;

  #views = new Map<string, TerminalView>();
  #catalogue: TerminalInfo[] = [];
  #editor: EditorArea;
  #sidebar: Sidebar;
  #quick = new QuickInput();
  #toasts = new Notifications();
  #build = new BuildIndicator();
  #notifier = new BackgroundNotifier();
  #actions: Action[] = [];
  #bindings: { action: Action; key: Keybinding }[] = [];
  #status: Record<string, HTMLElement> = {};
  #banner: HTMLElement;
  #bannerTimer: ReturnType<typeof setInterval> | undefined;
  #retryAt = 0;
  #workbenchEl: HTMLElement;
  #sidebarEl: HTMLElement;
  #activity: Record<string, HTMLElement> = {};
  #wasOnline = false;
  #restored = false;
  #pendingDeepLink: string | undefined;
  #ended: HTMLElement | undefined;
  #lastRejection = { text: '', at: 0 };
  #probeAt = 0;

  constructor(config: AppConfig, client: AhpClient) {
    this.config = config;
    this.client = client;
    this.role = config.role || 'owner';
    this.clientId = client.clientId;
    this.#workbenchEl = document.getElementById('workbench')!;
    this.#sidebarEl = document.getElementById('sidebar')!;
    this.#banner = document.getElementById('offline-banner')!;
    this.#workbenchEl.dataset.role = this.role;
    if (this.role === 'viewer') this.#buildAccessBanner();
    const editorEl = document.getElementById('editor')!;
    this.#editor = new EditorArea(editorEl, document.getElementById('editor-empty')!, this);
    this.#sidebar = new Sidebar(this.#sidebarEl, this);
    document.body.append(this.#quick.element, this.#toasts.element);
    this.#registerActions();
    this.#buildActivityBar();
    this.#buildStatusBar();
    this.#buildWatermark();
    this.#wireSash();
    this.#wireClient();
    this.#wireKeys();
    if (localStorage.getItem('termhost.sidebar') === 'hidden') this.#toggleSidebar(false);
    this.themes.onChange(() => this.#renderStatus());
    window.addEventListener('hashchange', () => this.#onHash());
    this.#pendingDeepLink = location.hash.startsWith('#') && location.hash.length > 1 ? decodeURIComponent(location.hash.slice(1)) : undefined;
    this.#restoreLayout();
    this.#renderStatus();
    this.#updateBuild();
  }

  // ---- client wiring ----

  #wireClient(): void {
    const c = this.client;
    c.on('state', (s, d) => this.#onConnection(s, d));
    c.on('latency', () => this.#renderStatus());
    c.on('snapshot', (ch, st, reason) => {
      if (ch === ROOT_CHANNEL) this.#onRoot(st as RootState);
      else {
        const v = this.#views.get(ch);
        if (v) {
          v.onSnapshot(st as TerminalState);
          if (this.#pendingDeepLink && v === this.#editor.activeView) {
            v.revealCommand(this.#pendingDeepLink);
            this.#pendingDeepLink = undefined;
          }
        }
        if (reason === 'reinitialize' || reason === 'reconnect') this.#renderStatus();
      }
    });
    c.on('action', (env, st, _own, replayed) => {
      if (env.channel === ROOT_CHANNEL) {
        this.#onRoot(st as RootState);
        return;
      }
      this.#views.get(env.channel)?.onAction(env, st as TerminalState, replayed);
      if (env.action.type === 'terminal/exited') this.#onExited(env);
    });
    c.on('rejected', (env, reason) => {
      const what: Record<string, string> = {
        'terminal/claimed': 'Take Control',
        'terminal/resized': 'Resize',
        'terminal/titleChanged': 'Rename',
        'terminal/input': 'Input',
        'terminal/cleared': 'Clear',
      };
      // The server is the authority on roles: show its reason, once per burst
      // (a viewer's keystrokes would otherwise stack up identical toasts).
      const text = `${what[env.action.type] ?? env.action.type} was refused by the server: ${reason}.`;
      const now = Date.now();
      if (text === this.#lastRejection.text && now - this.#lastRejection.at < 3000) return;
      this.#lastRejection = { text, at: now };
      this.notify('error', text);
    });
    c.on('missing', (ch) => {
      const v = this.#views.get(ch);
      if (v) {
        this.notify('warning', `Terminal “${this.titleOf(v)}” no longer exists on the server.`);
        this.#closeView(v, false);
      }
    });
    c.on('view', (ch, st) => {
      // Predicted (pending) changes: e.g. a rename shows at once.
      const v = this.#views.get(ch);
      if (v && st) this.#editor.renderTabs();
      if (v && v === this.#editor.activeView) this.#renderStatus();
    });
  }

  #onRoot(st: RootState): void {
    const list = st.terminals ?? [];
    const before = new Set(this.#catalogue.map((t) => t.resource));
    this.#catalogue = list;
    this.#sidebar.renderTerminals(list);
    // Terminals disposed elsewhere: close their tabs.
    const now = new Set(list.map((t) => t.resource));
    for (const [uri, v] of this.#views) {
      if (before.has(uri) && !now.has(uri)) {
        this.notify('info', `Terminal “${this.titleOf(v)}” was closed.`);
        this.#closeView(v, false);
      }
    }
    this.#editor.renderTabs();
    this.#renderStatus();
  }

  #onExited(env: ActionEnvelope): void {
    const v = this.#views.get(env.channel);
    if (!v) return;
    const code = (env.action as { exitCode?: number }).exitCode;
    this.#notifier.notify(
      code === undefined || code === 0 ? `✓ ${this.titleOf(v)} exited` : `✗ ${this.titleOf(v)} exited with code ${code}`,
      'The terminal process ended.',
      `termhost-${v.id}`,
      () => this.#focusView(v),
    );
    this.#updateBuild();
    this.#editor.renderTabs();
  }

  #onConnection(s: ConnectionState, d: StateDetail): void {
    const online = s === 'online';
    this.#workbenchEl.classList.toggle('offline', s === 'offline');
    if (s === 'closed') {
      this.#banner.hidden = true;
      clearInterval(this.#bannerTimer);
      if (d.closeCode === CloseCodes.revoked) {
        const m = revokedMessage(d.error ?? '');
        this.#showEnded(m.title, m.detail, d.error ?? '');
      }
    }
    if (s === 'offline' && d.attempt >= 2) void this.#probeAccess();
    if (online) {
      this.#banner.hidden = true;
      clearInterval(this.#bannerTimer);
      if (this.#wasOnline) this.notify('info', 'Reconnected to the server.');
      this.#wasOnline = true;
    } else if (s === 'offline') {
      this.#retryAt = d.nextRetryMs !== undefined ? Date.now() + d.nextRetryMs : 0;
      this.#renderBanner();
      clearInterval(this.#bannerTimer);
      this.#bannerTimer = setInterval(() => this.#renderBanner(), 500);
    }
    for (const v of this.#views.values()) v.updateInput();
    this.#renderStatus();
  }

  #renderBanner(): void {
    const b = this.#banner;
    clear(b);
    const wait = Math.max(0, Math.ceil((this.#retryAt - Date.now()) / 1000));
    b.append(
      svg(icons.disconnect),
      h('strong', null, 'Connection lost.'),
      h('span', null, this.client.connection === 'offline' && this.#retryAt && wait > 0 ? ` Reconnecting in ${wait} s… Input is paused until the connection is back.` : ' Reconnecting… Input is paused until the connection is back.'),
      h('button.link-button', { type: 'button', onclick: () => this.client.retryNow() }, 'Retry Now'),
    );
    b.hidden = false;
  }

  online(): boolean {
    return this.client.online;
  }

  /** A viewer's page says so at the top, whatever terminal is shown. */
  #buildAccessBanner(): void {
    const b = h(
      'div.access-banner#access-banner',
      { role: 'status' },
      svg(icons.eye),
      h('strong', null, 'View only'),
      h('span', null, 'This terminal was shared with you to watch. Your keystrokes are not sent.'),
    );
    this.#banner.after(b);
  }

  /**
   * Reconnects keep failing: a refused upgrade (401) is invisible to the
   * page, so ask for the page itself. A session or link that is gone ends
   * the retries with a clear message; anything else keeps retrying.
   */
  async #probeAccess(): Promise<void> {
    const now = Date.now();
    if (this.#ended || now - this.#probeAt < 8000) return;
    this.#probeAt = now;
    let status: number;
    try {
      const r = await fetch(accessProbeUrl(this.config.basePath, this.role, this.config.terminalId), { credentials: 'same-origin', cache: 'no-store', redirect: 'manual' });
      status = r.status;
    } catch {
      return; // the server is unreachable: the retries go on
    }
    const lost = accessLost(this.role, status);
    if (!lost || this.client.online) return;
    this.client.close();
    this.#showEnded(lost.title, lost.detail, '');
  }

  /** Our access ended (share link revoked, signed out): say so; never reconnect. */
  #showEnded(title: string, detail: string, reason: string): void {
    if (this.#ended) return;
    const m = { title, detail };
    this.#workbenchEl.classList.add('ended');
    document.getElementById('access-banner')?.remove();
    const banner = h('div.offline-banner.ended-banner#ended-banner', { role: 'alert' }, svg(icons.error), h('strong', null, `${m.title}.`), h('span', null, m.detail));
    this.#banner.after(banner);
    this.#ended = h(
      'div.ended-overlay#ended-overlay',
      { 'data-title': m.title },
      h(
        'div.notfound-card',
        null,
        h('div.notfound-icon', { 'aria-hidden': 'true' }, '>_'),
        h('h1', null, m.title),
        h('p', null, `${m.detail}${this.role === 'owner' ? '' : " You no longer receive this terminal's output."}`),
        reason ? h('p.ended-reason', null, `Server: ${reason}`) : null,
        this.role === 'owner' ? h('p', null, h('button.button', { type: 'button', onclick: () => location.reload() }, 'Reload')) : null,
      ),
    );
    document.getElementById('editor')!.append(this.#ended);
    for (const v of this.#views.values()) v.updateInput();
    this.#renderStatus();
  }

  // ---- views ----

  #viewFor(uri: string): TerminalView {
    let v = this.#views.get(uri);
    if (!v) {
      v = new TerminalView(uri, this);
      this.#views.set(uri, v);
    }
    return v;
  }

  /** Open (subscribe and show) a terminal. */
  openTerminal(uri: string, toSide = false, focus = true): TerminalView {
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
    if (!existing) this.#subscribe(v);
    return v;
  }

  #subscribe(v: TerminalView): void {
    this.client.subscribe(v.uri).then(
      (st) => {
        // The snapshot event already drew it; make sure on a cached mirror too.
        if (!v.loaded && st) v.onSnapshot(st as TerminalState);
      },
      (e) => {
        if (this.#views.get(v.uri) !== v) return;
        const notFound = e instanceof RpcError || String(e).includes('not found');
        if (notFound) {
          this.notify('error', `Terminal ${v.id} was not found on the server.`);
          this.#closeView(v, false);
        }
      },
    );
  }

  #closeView(v: TerminalView, unsubscribe = true): void {
    if (this.#views.get(v.uri) !== v) return;
    this.#views.delete(v.uri);
    this.#editor.close(v);
    v.dispose();
    if (unsubscribe) this.client.unsubscribe(v.uri);
    this.#saveLayout();
    this.#sidebar.refreshSelection();
  }

  #focusView(v: TerminalView): void {
    this.#editor.open(v, this.#editor.groupOf(v));
  }

  get activeView(): TerminalView | undefined {
    return this.#editor.activeView;
  }

  isOpen(uri: string): boolean {
    return this.#views.has(uri);
  }

  activeUri(): string | undefined {
    return this.activeView?.uri;
  }

  async newTerminal(toSide = false): Promise<void> {
    if (this.role !== 'owner') return;
    if (!this.client.online) {
      this.notify('warning', 'Cannot create a terminal while offline.');
      return;
    }
    const uri = terminalUri(newTerminalId());
    const group = toSide && this.#editor.views.length > 0 ? this.#editor.splitGroup() : undefined;
    const v = this.#viewFor(uri);
    this.#editor.open(v, group);
    const size = v.proposeSize() ?? { cols: 80, rows: 24 };
    try {
      await this.client.createTerminal({ channel: uri, claim: { kind: 'client', clientId: this.clientId }, cols: size.cols, rows: size.rows });
      this.#subscribe(v);
      this.#saveLayout();
    } catch (e) {
      this.notify('error', `Could not create a terminal: ${(e as Error).message}`);
      this.#closeView(v, false);
    }
  }

  async rename(uri: string): Promise<void> {
    const info = this.#catalogue.find((t) => t.resource === uri);
    const cur = this.client.state<TerminalState>(uri)?.title ?? info?.title ?? '';
    const title = await this.#quick.input({ value: cur, prompt: 'Enter a new name for the terminal (empty restores the automatic title)', title: 'Rename Terminal' });
    if (title === undefined || title === cur) return;
    if (this.client.dispatch(uri, { type: 'terminal/titleChanged', title }) === undefined) this.notify('warning', 'Offline: the terminal was not renamed.');
  }

  async kill(uri: string): Promise<void> {
    const info = this.#catalogue.find((t) => t.resource === uri);
    const v = this.#views.get(uri);
    const running = info ? !hasExited(info) : true;
    const name = info?.title ?? (v ? this.titleOf(v) : terminalIdOf(uri));
    if (running) {
      const ok = await confirmDialog({
        message: `Do you want to terminate “${name}”?`,
        detail: 'The shell and every process it started are ended for everyone watching this terminal.',
        primary: 'Terminate',
        icon: icons.warning,
        severity: 'warning',
      });
      if (!ok) return;
    }
    try {
      await this.client.disposeTerminal(uri);
    } catch (e) {
      this.notify('error', `Could not kill the terminal: ${(e as Error).message}`);
    }
  }

  openTerminalPicker(): void {
    const items = this.#catalogue.map((t) => ({
      label: t.title || terminalIdOf(t.resource),
      description: `${hasExited(t) ? `exited${exitCodeOf(t) !== undefined ? ` (${exitCodeOf(t)})` : ''}` : 'running'} · ${terminalIdOf(t.resource)}`,
      icon: hasExited(t) ? (exitCodeOf(t) ? icons.error : icons.pass) : icons.terminal,
      uri: t.resource,
    }));
    void this.#quick.pick(items, { placeholder: 'Type the name of a terminal to open, or > for commands', matchOnDescription: true, onValue: (v) => this.#switchToCommands(v) }).then((it) => it && this.openTerminal(it.uri));
  }

  // ---- ViewHost ----

  focused(view: TerminalView): void {
    if (this.#editor.activeView !== view) {
      const g = this.#editor.groupOf(view);
      if (g) this.#editor.setActiveGroup(g);
    }
    this.activated(view);
  }

  changed(view: TerminalView, what: 'state' | 'commands' | 'size' | 'status'): void {
    const active = view === this.activeView;
    if (what === 'commands' && active) this.#sidebar.renderCommands(view);
    if (what === 'state' || what === 'status') this.#editor.renderTabs();
    if (active) {
      this.#renderStatus();
      this.#updateBuild();
    }
    if (what === 'state') this.#saveLayout();
  }

  commandFinished(view: TerminalView, c: CommandRecord): void {
    const s = commandStatus(c);
    this.#notifier.notify(
      s === 'failure' ? `✗ ${c.commandLine} (exit ${c.exitCode})` : `✓ ${c.commandLine}`,
      `${this.titleOf(view)}${c.durationMs !== undefined ? ` · ${formatDuration(c.durationMs)}` : ''}`,
      `termhost-${view.id}`,
      () => {
        this.#focusView(view);
        view.revealCommand(c.commandId);
      },
    );
  }

  async confirmPaste(text: string): Promise<boolean> {
    const lines = text.replace(/\r?\n$/, '').split(/\r?\n/);
    const preview = lines.slice(0, 8).join('\n') + (lines.length > 8 ? `\n… ${lines.length - 8} more lines` : '');
    return confirmDialog({
      message: `Are you sure you want to paste ${lines.length} lines of text into the terminal?`,
      detail: 'Each line may run as a command.',
      preview,
      primary: 'Paste',
      icon: icons.warning,
      severity: 'warning',
    });
  }

  notify(kind: 'info' | 'error' | 'warning', message: string, actions: { label: string; run: () => void }[] = []): void {
    this.#toasts.show(kind, message, kind === 'error' ? icons.error : kind === 'warning' ? icons.warning : icons.info, actions);
  }

  async copyText(text: string): Promise<void> {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      const ta = h('textarea', { style: 'position:fixed;left:-9999px;top:0' });
      ta.value = text;
      document.body.append(ta);
      ta.select();
      const ok = document.execCommand('copy');
      ta.remove();
      if (!ok) {
        this.notify('error', 'Could not copy to the clipboard.');
        return;
      }
    }
    this.notify('info', text.length > 60 ? `Copied ${text.length} characters.` : `Copied “${text.replace(/\s+/g, ' ').trim()}”.`);
  }

  programCopy(text: string): void {
    // No execCommand fallback: it would move the focus out of the terminal.
    navigator.clipboard.writeText(text).then(
      () => this.notify('info', `A program copied ${text.length} characters to the clipboard (OSC 52).`),
      (e) => console.info('termhost: OSC 52 clipboard write refused by the browser', e),
    );
  }

  takeControl(view: TerminalView): void {
    if (this.role === 'viewer') return;
    if (view.isHolder) return;
    if (this.client.dispatch(view.uri, { type: 'terminal/claimed', claim: { kind: 'client', clientId: this.clientId } }) === undefined) {
      this.notify('warning', 'Offline: cannot take control.');
    }
  }

  /** The Share dialog of a terminal (owner only). */
  share(uri: string): void {
    if (this.role !== 'owner') return;
    if (!this.client.online) {
      this.notify('warning', 'Cannot manage share links while offline.');
      return;
    }
    const v = this.#views.get(uri);
    const title = v ? this.titleOf(v) : this.#catalogue.find((t) => t.resource === uri)?.title || terminalIdOf(uri);
    void openShareDialog(this, uri, title);
  }

  /** Drop the owner session cookie, then reload into the sign-in page. */
  async signOut(): Promise<void> {
    try {
      // JSON: the server refuses any other body type (cross-site form posts).
      const r = await fetch(`${this.config.basePath}/auth/logout`, { method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/json' }, body: '{}' });
      if (!r.ok) throw new Error(`HTTP ${r.status}`);
    } catch (e) {
      this.notify('error', `Could not sign out: ${(e as Error).message}`);
      return;
    }
    this.client.close();
    location.reload();
  }

  terminalLink(view: TerminalView): string {
    return `${location.origin}${this.config.basePath}/t/${encodeURIComponent(view.id)}`;
  }

  commandLink(view: TerminalView, commandId: string): string {
    return `${this.terminalLink(view)}#${encodeURIComponent(commandId)}`;
  }

  isWorkbenchKey(e: KeyboardEvent): boolean {
    return this.#bindings.some((b) => (b.action.inTerminal || isMac()) && matches(e, b.key) && (!b.action.when || b.action.when()));
  }

  // ---- EditorHost ----

  activated(view: TerminalView | undefined): void {
    this.#sidebar.renderCommands(view);
    this.#sidebar.refreshSelection();
    this.#renderStatus();
    this.#updateBuild();
    this.#updateUrl(view);
    this.#saveLayout();
  }

  closeTab(view: TerminalView): void {
    this.#closeView(view);
  }

  shareTerminal(view: TerminalView): void {
    this.share(view.uri);
  }

  killTerminal(view: TerminalView): void {
    void this.kill(view.uri);
  }

  splitRight(_group: EditorGroup): void {
    void this.newTerminal(true);
  }

  titleOf(view: TerminalView): string {
    return this.client.state<TerminalState>(view.uri)?.title || this.#catalogue.find((t) => t.resource === view.uri)?.title || view.id;
  }

  tabIcon(view: TerminalView): { icon: string; cls: string; tooltip: string } {
    const s = view.status;
    switch (s.kind) {
      case 'running':
        return { icon: icons.loading, cls: 'status-running spin', tooltip: `running: ${s.label}` };
      case 'failure':
        return { icon: icons.error, cls: 'status-failure', tooltip: hasExited(view.state!) ? s.label : `last command failed (exit ${s.code})` };
      case 'exited':
        return { icon: icons.pass, cls: 'status-exited', tooltip: s.label };
      default:
        return { icon: icons.terminal, cls: '', tooltip: '' };
    }
  }

  layoutChanged(): void {
    this.#saveLayout();
  }

  // ---- SidebarHost ----

  revealCommand(view: TerminalView, commandId: string): void {
    this.#focusView(view);
    if (view.revealCommand(commandId)) history.replaceState(null, '', `${this.config.basePath}/t/${encodeURIComponent(view.id)}#${encodeURIComponent(commandId)}`);
  }

  copyCommandOutput(view: TerminalView, commandId: string): void {
    void view.copyCommandOutput(commandId);
  }

  // ---- URL and layout persistence ----

  #updateUrl(view: TerminalView | undefined): void {
    const want = view ? `${this.config.basePath}/t/${encodeURIComponent(view.id)}` : `${this.config.basePath}/`;
    if (location.pathname !== want) history.replaceState(null, '', want);
  }

  #onHash(): void {
    const id = decodeURIComponent(location.hash.slice(1));
    if (id && this.activeView) this.activeView.revealCommand(id);
  }

  #saveLayout(): void {
    if (!this.#restored) return;
    sessionStorage.setItem('termhost.layout', JSON.stringify(this.#editor.serialize()));
  }

  #restoreLayout(): void {
    let saved: { groups?: string[][]; active?: string } = {};
    try {
      saved = JSON.parse(sessionStorage.getItem('termhost.layout') ?? '{}');
    } catch {
      /* ignore */
    }
    const target = this.config.terminalId ? terminalUri(this.config.terminalId) : undefined;
    // A share link grants one terminal: never restore others into its page.
    const groups = this.role !== 'owner' ? [] : Array.isArray(saved.groups) ? saved.groups.filter((g) => Array.isArray(g) && g.length) : [];
    groups.forEach((uris, gi) => {
      for (const uri of uris) {
        if (typeof uri !== 'string' || !uri.startsWith('ahp-terminal:')) continue;
        if (gi > 0 && this.#editor.groups.length <= gi) this.#editor.splitGroup(this.#editor.groups[this.#editor.groups.length - 1]);
        const g = this.#editor.groups[Math.min(gi, this.#editor.groups.length - 1)]!;
        this.openTerminal(uri, false, false);
        const v = this.#views.get(uri)!;
        if (this.#editor.groupOf(v) !== g) this.#editor.move(v, g, g.views.length);
      }
    });
    const focus = target ?? (this.role === 'owner' ? saved.active : undefined);
    if (focus) {
      const v = this.#views.get(focus);
      if (v) this.#focusView(v);
      else this.openTerminal(focus);
    }
    this.#restored = true;
    this.#saveLayout();
    this.#updateUrl(this.activeView);
  }

  // ---- status bar, title, favicon ----

  #updateBuild(): void {
    const v = this.activeView;
    let s: BuildStatus = { kind: 'none', title: '' };
    if (v) {
      const st = v.status;
      s = { kind: st.kind === 'idle' ? 'idle' : st.kind, code: st.code, title: this.titleOf(v) };
    }
    this.#build.update(s);
  }

  #statusItem(id: string, side: 'left' | 'right', onclick?: () => void): HTMLElement {
    const el = h(onclick ? 'button.statusbar-item' : ('div.statusbar-item' as 'div'), { id: `status.${id}`, type: onclick ? 'button' : undefined, onclick });
    this.#status[id] = el;
    document.getElementById(`statusbar-${side}`)!.append(el);
    return el;
  }

  #buildStatusBar(): void {
    const bar = document.getElementById('statusbar')!;
    bar.append(h('div.statusbar-left#statusbar-left'), h('div.statusbar-right#statusbar-right'));
    this.#statusItem('host', 'left', () => this.#showPalette()).classList.add('remote-kind');
    this.#statusItem('connection', 'left', () => this.client.retryNow());
    this.#statusItem('protocol', 'left');
    this.#statusItem('role', 'left');
    this.#statusItem('claim', 'right', () => this.activeView && this.takeControl(this.activeView));
    this.#statusItem('cwd', 'right');
    this.#statusItem('size', 'right');
    this.#statusItem('build', 'right', () => this.activeView && this.#goToCommand());
    this.#statusItem('notifications', 'right', () => void this.#toggleNotifications());
  }

  #set(id: string, icon: string | undefined, text: string, title: string, cls = ''): void {
    const el = this.#status[id];
    if (!el) return;
    clear(el);
    if (icon) el.append(svg(icon, `codicon ${cls}`));
    if (text) el.append(h('span', null, text));
    el.title = title;
    el.hidden = !icon && !text;
  }

  #renderStatus(): void {
    const c = this.client;
    this.#set('host', icons.remote, 'termhost', `termhost ${this.config.version || ''} — Show All Commands`);
    const lat = c.latencyMs;
    switch (c.connection) {
      case 'online':
        this.#set('connection', icons.plug, lat !== undefined ? `Connected · ${lat < 10 ? lat.toFixed(1) : Math.round(lat)} ms` : 'Connected', `Connected to ${c.url}${lat !== undefined ? `\nRound trip (protocol ping): ${lat} ms` : ''}`);
        break;
      case 'connecting':
        this.#set('connection', icons.loading, 'Connecting…', `Connecting to ${c.url}`, 'spin');
        break;
      case 'offline':
        this.#set('connection', icons.disconnect, 'Offline — reconnecting', 'Connection lost. Click to retry now.', 'status-failure');
        break;
      default:
        this.#set('connection', icons.disconnect, this.#ended ? (this.role === 'owner' ? 'Signed out' : 'Link ended') : 'Disconnected', this.#ended ? `${this.#ended.dataset.title}: no reconnect.` : 'Closed');
    }
    this.#status.connection!.classList.toggle('offline', c.connection === 'offline');
    this.#set('protocol', undefined, c.protocolVersion ? `AHP ${c.protocolVersion}` : '', `Agent Host Protocol version negotiated with the server${c.serverInfo ? `\nServer: ${c.serverInfo.name} ${c.serverInfo.version ?? ''}` : ''}`);
    const roleIcon = this.role === 'viewer' ? icons.eye : this.role === 'driver' ? icons.keyboard : icons.person;
    const ended = !!this.#ended;
    this.#set('role', roleIcon, this.role === 'viewer' ? 'Viewer · View Only' : roleLabels[this.role], `Your role: ${roleLabels[this.role]}\n${roleDescriptions[this.role]}${ended ? '\nThe share link was revoked or has expired.' : ''}`, '');
    this.#status.role!.classList.toggle('role-shared', this.role !== 'owner');
    const v = this.activeView;
    const st = v?.state;
    if (v && st) {
      const holder = claimLabel(st.claim, this.clientId);
      this.#set('claim', v.isHolder ? icons.key : icons.eye, v.isHolder ? 'Controlled by you' : `Controlled by ${holder}`, v.isHolder ? 'You size this terminal' : this.role === 'viewer' ? `The terminal is sized by ${holder}` : `The terminal is sized by ${holder}. Click to take control.`);
      this.#set('cwd', undefined, cwdLabel(st.cwd), st.cwd ? `Current directory: ${cwdLabel(st.cwd)}` : '');
      this.#set('size', undefined, st.cols && st.rows ? `${st.cols}×${st.rows}` : '', `Terminal size (columns × rows)${v.isHolder ? '' : ' set by the claim holder'}\nRenderer: ${v.renderer}`);
      const s = v.status;
      const icon = s.kind === 'running' ? icons.loading : s.kind === 'failure' ? icons.error : s.kind === 'success' || s.kind === 'exited' ? icons.pass : undefined;
      const text = s.kind === 'running' ? 'Running' : s.kind === 'failure' ? `Exit ${s.code ?? ''}`.trim() : s.kind === 'success' ? 'Succeeded' : s.kind === 'exited' ? 'Exited' : '';
      this.#set('build', icon, text, s.label ? `${s.kind === 'running' ? 'Running' : 'Last'}: ${s.label}\nClick to go to a command` : '', s.kind === 'running' ? 'spin' : `status-${s.kind}`);
    } else {
      for (const id of ['claim', 'cwd', 'size', 'build']) this.#set(id, undefined, '', '');
    }
    this.#set('notifications', icons.bell, '', this.#notifier.enabled ? 'Notifications on when commands finish in the background (click to turn off)' : 'Turn on notifications when commands finish in the background', this.#notifier.enabled ? 'bell-on' : '');
  }

  // ---- activity bar, side bar, sash ----

  #buildActivityBar(): void {
    const bar = document.getElementById('activitybar')!;
    const item = (id: string, icon: string, title: string, run: () => void) => {
      const el = h('button.action-item', { type: 'button', title, 'aria-label': title, onclick: run }, svg(icon, 'codicon activity-icon'));
      this.#activity[id] = el;
      return el;
    };
    bar.append(
      h('div.actions-top', null, item('terminals', icons.terminalLarge, 'Terminals', () => this.#showPane('terminals')), item('commands', icons.listLarge, 'Commands', () => this.#showPane('commands'))),
      h('div.actions-bottom', null, item('manage', icons.gearLarge, 'Manage', () => this.#showPalette('Preferences: '))),
    );
    this.#activity.terminals!.classList.add('checked');
  }

  #showPane(which: 'terminals' | 'commands'): void {
    const visible = !this.#workbenchEl.classList.contains('sidebar-hidden');
    const pane = which === 'terminals' ? this.#sidebar.terminals : this.#sidebar.commands;
    if (visible && this.#activity[which]!.classList.contains('checked') && !pane.collapsed) {
      this.#toggleSidebar(false);
      return;
    }
    this.#toggleSidebar(true);
    pane.setCollapsed(false);
    for (const [k, el] of Object.entries(this.#activity)) el.classList.toggle('checked', k === which);
    pane.element.scrollIntoView({ block: 'nearest' });
    (pane.element.querySelector('.list-row') as HTMLElement | null)?.focus();
  }

  #toggleSidebar(show = this.#workbenchEl.classList.contains('sidebar-hidden')): void {
    this.#workbenchEl.classList.toggle('sidebar-hidden', !show);
    localStorage.setItem('termhost.sidebar', show ? 'shown' : 'hidden');
    for (const v of this.#views.values()) v.scheduleLayout();
  }

  #wireSash(): void {
    const sash = document.getElementById('sidebar-sash')!;
    const saved = Number(localStorage.getItem('termhost.sidebarWidth'));
    if (saved >= 170 && saved <= 800) this.#workbenchEl.style.setProperty('--sidebar-width', `${saved}px`);
    sash.addEventListener('pointerdown', (e) => {
      e.preventDefault();
      sash.setPointerCapture(e.pointerId);
      sash.classList.add('active');
      const left = this.#sidebarEl.getBoundingClientRect().left;
      const move = (ev: PointerEvent) => {
        const w = Math.max(170, Math.min(800, ev.clientX - left));
        this.#workbenchEl.style.setProperty('--sidebar-width', `${w}px`);
      };
      const up = () => {
        sash.classList.remove('active');
        sash.removeEventListener('pointermove', move);
        sash.removeEventListener('pointerup', up);
        localStorage.setItem('termhost.sidebarWidth', String(Math.round(this.#sidebarEl.getBoundingClientRect().width)));
        for (const v of this.#views.values()) v.scheduleLayout();
      };
      sash.addEventListener('pointermove', move);
      sash.addEventListener('pointerup', up);
    });
    sash.addEventListener('dblclick', () => {
      this.#workbenchEl.style.removeProperty('--sidebar-width');
      localStorage.removeItem('termhost.sidebarWidth');
    });
  }

  #buildWatermark(): void {
    const w = document.querySelector('#editor-empty .watermark');
    if (!w) return;
    const entries = (this.role !== 'owner' ? ['workbench.palette', 'terminal.open'] : ['workbench.palette', 'terminal.new', 'terminal.open', 'terminal.split']).map((id) => this.#actions.find((a) => a.id === id)!);
    w.append(
      h(
        'dl.watermark-box',
        null,
        ...entries.map((a) =>
          h('div.watermark-entry', { onclick: () => void a.run() }, h('dt', null, a.title), h('dd', null, ...(a.key ? keyLabel(a.key.split(' or ')[0]!).split(' ').map((k) => h('kbd', null, k)) : []))),
        ),
      ),
    );
  }

  // ---- actions and keys ----

  #registerActions(): void {
    // Drivers may type, resize, claim, rename and clear; only the owner
    // creates, kills and shares terminals. The server enforces the same.
    const canEdit = () => this.role !== 'viewer';
    const isOwner = () => this.role === 'owner';
    const hasView = () => !!this.activeView;
    const view = () => this.activeView;
    const add = (a: Action) => {
      this.#actions.push(a);
      if (a.key) for (const k of a.key.split(' or ')) this.#bindings.push({ action: a, key: parseKey(k) });
    };
    add({ id: 'workbench.palette', category: 'View', title: 'Show All Commands', key: 'Ctrl+Shift+P or F1', inTerminal: true, run: () => this.#showPalette() });
    add({ id: 'terminal.new', category: 'Terminal', title: 'Create New Terminal', key: 'Ctrl+Shift+`', inTerminal: true, when: isOwner, run: () => this.newTerminal() });
    add({ id: 'terminal.split', category: 'Terminal', title: 'Split Terminal (New Terminal to the Right)', key: 'Ctrl+Shift+5', inTerminal: true, when: isOwner, run: () => this.newTerminal(true) });
    add({ id: 'terminal.open', category: 'Terminal', title: 'Open Terminal…', key: 'Ctrl+P', run: () => this.openTerminalPicker() });
    add({ id: 'terminal.moveRight', category: 'View', title: 'Move Terminal into Group to the Right', when: hasView, run: () => void this.openTerminal(view()!.uri, true) });
    add({ id: 'terminal.nextTab', category: 'View', title: 'Open Next Terminal Tab', key: 'Alt+PageDown', inTerminal: true, when: hasView, run: () => this.#editor.focusNext(1) });
    add({ id: 'terminal.prevTab', category: 'View', title: 'Open Previous Terminal Tab', key: 'Alt+PageUp', inTerminal: true, when: hasView, run: () => this.#editor.focusNext(-1) });
    add({ id: 'terminal.rename', category: 'Terminal', title: 'Rename…', when: () => hasView() && canEdit(), run: () => this.rename(view()!.uri) });
    add({ id: 'terminal.kill', category: 'Terminal', title: 'Kill the Active Terminal', when: () => hasView() && isOwner(), run: () => this.kill(view()!.uri) });
    add({ id: 'terminal.share', category: 'Terminal', title: 'Share Terminal…', when: () => hasView() && isOwner(), run: () => this.share(view()!.uri) });
    add({ id: 'terminal.close', category: 'View', title: 'Close Terminal Tab (Keep Running)', when: hasView, run: () => this.#closeView(view()!) });
    add({ id: 'terminal.takeControl', category: 'Terminal', title: 'Take Control (Size the Terminal to This Window)', when: () => hasView() && canEdit() && !view()!.isHolder, run: () => this.takeControl(view()!) });
    add({ id: 'terminal.copyLink', category: 'Terminal', title: 'Copy Link to Terminal', when: hasView, run: () => this.copyText(this.terminalLink(view()!)) });
    add({ id: 'terminal.clear', category: 'Terminal', title: 'Clear', when: () => hasView() && canEdit(), run: () => void this.client.dispatch(view()!.uri, { type: 'terminal/cleared' }) });
    add({ id: 'terminal.find', category: 'Terminal', title: 'Find', key: 'Ctrl+F', inTerminal: true, when: hasView, run: () => view()!.openFind() });
    add({ id: 'terminal.copySelection', category: 'Terminal', title: 'Copy Selection', key: 'Ctrl+Shift+C', inTerminal: true, when: hasView, run: () => this.#copySelection() });
    add({ id: 'terminal.paste', category: 'Terminal', title: 'Paste', key: 'Ctrl+Shift+V', inTerminal: true, when: () => hasView() && canEdit(), run: () => this.#paste() });
    add({ id: 'terminal.selectAll', category: 'Terminal', title: 'Select All', when: hasView, run: () => view()!.term.selectAll() });
    add({ id: 'terminal.prevCommand', category: 'Terminal', title: 'Scroll to Previous Command', key: 'Ctrl+Up', inTerminal: true, when: hasView, run: () => view()!.jumpCommand(-1) });
    add({ id: 'terminal.nextCommand', category: 'Terminal', title: 'Scroll to Next Command', key: 'Ctrl+Down', inTerminal: true, when: hasView, run: () => view()!.jumpCommand(1) });
    add({ id: 'terminal.copyLastOutput', category: 'Terminal', title: 'Copy Output of Last Command', when: hasView, run: () => view()!.copyCommandOutput() });
    add({ id: 'terminal.goToCommand', category: 'Terminal', title: 'Go to Command…', when: hasView, run: () => this.#goToCommand() });
    add({ id: 'terminal.scrollBottom', category: 'Terminal', title: 'Scroll to Bottom', when: hasView, run: () => view()!.term.scrollToBottom() });
    add({ id: 'view.toggleSidebar', category: 'View', title: 'Toggle Primary Side Bar Visibility', key: 'Ctrl+B', run: () => this.#toggleSidebar() });
    add({ id: 'view.terminals', category: 'View', title: 'Show Terminals', run: () => this.#showPane('terminals') });
    add({ id: 'view.commands', category: 'View', title: 'Show Commands', run: () => this.#showPane('commands') });
    add({ id: 'view.failedOnly', category: 'Commands', title: 'Toggle Failed Commands Only', run: () => (this.#sidebar.toggleFailedOnly(), this.#showPane('commands')) });
    add({ id: 'theme.pick', category: 'Preferences', title: 'Color Theme', run: () => this.#pickTheme() });
    add({ id: 'theme.hc', category: 'Preferences', title: 'Toggle High Contrast Theme', run: () => this.themes.set(this.themes.kind.startsWith('hc') ? 'auto' : this.themes.kind === 'light' ? 'hc-light' : 'hc-dark') });
    add({ id: 'renderer.toggle', category: 'Preferences', title: 'Toggle GPU (WebGL) Terminal Rendering (Reload)', run: () => this.#toggleRenderer() });
    add({ id: 'settings.osc52Write', category: 'Preferences', title: 'Allow Programs to Write the Clipboard (OSC 52)', state: () => (clipboardWriteAllowed() ? 'on' : 'off'), run: () => this.#toggleClipboardWrite() });
    add({ id: 'notifications.toggle', category: 'Notifications', title: 'Notify When Commands Finish in a Background Tab', run: () => this.#toggleNotifications() });
    add({ id: 'connection.reconnect', category: 'Connection', title: 'Reconnect Now', run: () => (this.client.online ? this.client.dropConnection() : this.client.retryNow()) });
    add({ id: 'account.signOut', category: 'Account', title: 'Sign Out', when: isOwner, run: () => this.signOut() });
    add({ id: 'help.about', category: 'Help', title: 'About', run: () => this.#about() });
  }

  #wireKeys(): void {
    document.addEventListener(
      'keydown',
      (e) => {
        if (this.#quick.open || document.querySelector('.dialog-overlay')) return;
        const inTerminal = !!(e.target as HTMLElement | null)?.closest?.('.xterm');
        const inInput = !inTerminal && /^(INPUT|TEXTAREA)$/.test((e.target as HTMLElement | null)?.tagName ?? '');
        for (const b of this.#bindings) {
          if (!matches(e, b.key)) continue;
          if (inTerminal && !b.action.inTerminal && !isMac()) continue;
          if (inInput && b.action.id !== 'workbench.palette' && b.action.id !== 'terminal.new') continue;
          if (b.action.when && !b.action.when()) continue;
          e.preventDefault();
          e.stopPropagation();
          void b.action.run();
          return;
        }
      },
      true,
    );
  }

  #paletteItems(): (QuickPickItem & { action: Action })[] {
    return this.#actions
      .filter((a) => !a.when || a.when())
      .map((a) => ({ label: `${a.category}: ${a.title}`, description: a.state?.(), keybinding: a.key?.split(' or ')[0], action: a }))
      .sort((x, y) => x.label.localeCompare(y.label));
  }

  #switchToCommands(v: string): boolean {
    if (!v.startsWith('>')) return false;
    this.#showPalette(v.slice(1));
    return true;
  }

  #showPalette(query = ''): void {
    const items = this.#paletteItems();
    void this.#quick
      .pick(items, {
        placeholder: 'Type the name of a command to run.',
        value: '>' + query,
        onValue: (val) => {
          if (val.startsWith('>')) return false;
          // Without ">" the palette becomes the terminal picker, as in VS Code.
          this.#quick.cancel();
          this.openTerminalPicker();
          return true;
        },
      })
      .then((it) => it && void it.action.run());
  }

  #goToCommand(): void {
    const v = this.activeView;
    if (!v) return;
    const items = [...v.commands].reverse().map((c) => {
      const s = commandStatus(c);
      return {
        label: c.commandLine || '(empty)',
        description: s === 'running' ? 'running' : `${c.exitCode !== undefined && c.exitCode !== 0 ? `exit ${c.exitCode} · ` : ''}${c.durationMs !== undefined ? formatDuration(c.durationMs) : ''}`,
        icon: s === 'running' ? icons.loading : s === 'failure' ? icons.error : icons.pass,
        id: c.commandId,
      };
    });
    if (!items.length) {
      this.notify('info', 'No commands yet in this terminal.');
      return;
    }
    void this.#quick.pick(items, { placeholder: 'Go to a command in this terminal', matchOnDescription: true }).then((it) => it && this.revealCommand(v, it.id));
  }

  #pickTheme(): void {
    const current = this.themes.setting;
    const items = (Object.keys(themeLabels) as ThemeSetting[]).map((k) => ({ label: themeLabels[k], description: k === current ? 'current' : undefined, key: k }));
    void this.#quick.pick(items, { placeholder: 'Select Color Theme' }).then((it) => it && this.themes.set(it.key));
  }

  #toggleRenderer(): void {
    const dom = localStorage.getItem('termhost.renderer') === 'dom';
    if (dom) localStorage.removeItem('termhost.renderer');
    else localStorage.setItem('termhost.renderer', 'dom');
    this.notify('info', `Terminals will use the ${dom ? 'WebGL' : 'DOM'} renderer after a reload.`, [{ label: 'Reload Now', run: () => location.reload() }]);
  }

  /** Preferences: Allow programs to write the clipboard (OSC 52); off by default, kept in this browser. */
  #toggleClipboardWrite(): void {
    const on = !clipboardWriteAllowed();
    setClipboardWriteAllowed(on);
    this.notify(
      'info',
      on
        ? 'Programs can now write the clipboard (OSC 52) while this tab has focus. They can never read it.'
        : 'Programs can no longer write the clipboard (OSC 52).',
    );
  }

  async #toggleNotifications(): Promise<void> {
    if (this.#notifier.enabled) {
      this.#notifier.disable();
      this.notify('info', 'Background notifications are off.');
    } else {
      const p = await this.#notifier.enable();
      if (p === 'granted') this.notify('info', 'You will be notified when a command or terminal finishes while this tab is in the background.');
      else if (p === 'unsupported') this.notify('warning', 'This browser does not support notifications.');
      else this.notify('warning', 'Notification permission was not granted.');
    }
    this.#renderStatus();
  }

  async #copySelection(): Promise<void> {
    const v = this.activeView;
    const sel = v?.term.getSelection();
    if (!sel) return;
    await this.copyText(sel);
    v!.term.focus();
  }

  async #paste(): Promise<void> {
    const v = this.activeView;
    if (!v) return;
    let text: string;
    try {
      text = await navigator.clipboard.readText();
    } catch {
      this.notify('warning', 'The browser did not allow reading the clipboard. Use the browser’s paste (Ctrl+V / right click) instead.');
      return;
    }
    if (text) await v.paste(text);
  }

  #about(): void {
    const c = this.client;
    void confirmDialog({
      message: 'termhost',
      detail: `Version: ${this.config.version || 'dev'}\nProtocol: AHP ${c.protocolVersion || '—'}\nServer: ${c.serverInfo ? `${c.serverInfo.name} ${c.serverInfo.version ?? ''}` : '—'}\nClient id: ${c.clientId}\nRole: ${roleLabels[this.role]}`,
      primary: 'OK',
      icon: icons.info,
    });
  }

  // ---- introspection (the test build's hook, testhook.ts) ----

  get views(): TerminalView[] {
    return [...this.#views.values()];
  }

  viewOf(id?: string): TerminalView | undefined {
    return id ? this.#views.get(terminalUri(id)) : this.activeView;
  }

  get catalogue(): TerminalInfo[] {
    return this.#catalogue;
  }

  runAction(id: string): void | Promise<void> {
    return this.#actions.find((a) => a.id === id)?.run();
  }
}
