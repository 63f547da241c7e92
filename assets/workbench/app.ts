// The workbench, the composition root: creates the parts (editor area, side
// bar, activity bar, status bar, banners, commands and palette), wires the
// AHP client's events to them and to the terminal views, and answers the
// views', editor's and side bar's questions. The parts do the work.
//
// (Over 400 lines on purpose: it is the one place where the ~25 parts meet —
// each wiring is a few lines, and spreading them over files would hide who
// talks to whom.)

import type { ConnectionState, StateDetail } from '../ahp/client';
import type { MultiHostClient } from '../ahp/multihost';
import { deepLinkPath, hostApiUrl, splitHostUri, type HostList } from '../ahp/hosts';
import { extMeta, extMethods, type ScreenResult } from '../ahp/ext';
import { ROOT_CHANNEL, exitCodeOf, isTerminalAction, terminalIdOf, terminalUri, type RootState, type TerminalClaim, type TerminalInfo, type TerminalState } from '../ahp/types';
import { icons } from './icons';
import { Themes } from './theme';
import type { TerminalView, ViewHost } from './terminal/terminalView';
import { Control, avatars } from './terminal/presence';
import { TerminalViews } from './terminalViews';
import { commandLabel, commandStatus, type CommandRecord } from './terminal/commandTracker';
import { EditorArea, type EditorGroup, type EditorHost } from './editor';
import { Sidebar, hostGroupsOf, type HostGroupInfo, type SidebarHost } from './sidebar';
import { QuickInput, Notifications, type Notify } from './quickinput';
import { BuildIndicator, BackgroundNotifier } from './buildstatus';
import { formatDuration } from './format';
import { NameMemory } from './terminalNames';
import { linkBase, serverRestarted, type Role } from './access';
import { TerminalOps } from './terminalOps';
import { RejectionNotice } from './rejectionNotice';
import { CommandRegistry } from './commands';
import { buildWatermark } from './watermark';
import { registerWorkbenchActions, type ActionTarget } from './workbenchActions';
import { Palette } from './palette';
import { StatusBar, type StatusSource } from './statusBar';
import { ActivityBar } from './activityBar';
import { SidebarLayout } from './sidebarLayout';
import { KeyRow } from './keyRow';
import { ConnectionBanner } from './connectionBanner';
import { EditorLayoutStore } from './layoutStore';
import * as clipboard from './clipboardActions';
import { OVERLAY_CLOSED, keyboardIdle } from './dom';
import { commandsToSkipShell, setSkipShellSetting, skipShellSetting, startupTerminal } from './settings';
import { openSettingsEditor, type SettingId } from './settingsEditor';
import { Replays } from './player';
import { downloadUrl, recordingStateOf } from './recording';
import { handBackClaim, lastAgentOf, mayHandBack } from './terminal/agentMark';
import { SkipAnnouncer, routeSkips } from './terminal/skipAhead';
import { announce } from './preferences';
import { Approvals, agentSecretPrompt, attentionOf, mayAnswer, type Attention } from './approvals';

const LAST_HOST = 'termhost.newTerminalHost';

/** The host New Terminal used last in this browser ("" the home host). */
function lastHost(): string {
  try {
    return localStorage.getItem(LAST_HOST) ?? '';
  } catch {
    return '';
  }
}

function setLastHost(host: string): void {
  try {
    localStorage.setItem(LAST_HOST, host);
  } catch {
    /* storage unavailable: the next pick starts at the home host */
  }
}

/**
 * Marks the page's first terminal drawn with the keyboard in it
 * (performance mark termhost:prompt): other hosts never hold it up.
 */
function markPrompt(view: TerminalView): void {
  if (!view.loaded || !view.element.contains(document.activeElement) || performance.getEntriesByName('termhost:prompt').length > 0) return;
  performance.mark('termhost:prompt');
}

export interface AppConfig {
  basePath: string;
  terminalId: string;
  version: string;
  role: Role;
  /** The Unix account and host the shells run as (owner pages only; "" if unknown). */
  serverUser: string;
  serverHost: string;
  /** A person signed in by SSO: how they are named ("Alice Smith"); "" for the owner token and share links. */
  person?: string;
  /** The server's content budget per terminal, in bytes (0: the client default). */
  scrollback: number;
  /** The replay player's bundle and styles (player.ts), loaded on demand. */
  playerScript?: string;
  playerStyle?: string;
  /**
   * The host list, as GET <base>/api/hosts answers it: in the page of
   * whoever may list the hosts, so that every host's socket starts at boot.
   */
  hosts?: HostList;
}

export class Workbench implements ViewHost, EditorHost, SidebarHost, ActionTarget {
  readonly client: MultiHostClient;
  readonly themes = new Themes();
  readonly config: AppConfig;
  readonly role: Role;
  readonly clientId: string;
  readonly commands = new CommandRegistry();
  readonly palette: Palette;
  /** Presence and control requests (terminal/presence.ts). */
  readonly control: Control;
  /** Command lines waiting for a person's approval (approvals.ts). */
  readonly approvals: Approvals;

  #views: TerminalViews;
  #catalogue: TerminalInfo[] = [];
  /** The catalogue by URI: the side bar names every row from it. */
  #catalogueByUri = new Map<string, TerminalInfo>();
  /** The names the sidebar shows, to re-render it only when one changes. */
  #shownNames = '';
  /** Terminals' last titles: a message about one the server no longer lists still names it. */
  #nameMemory = new NameMemory();
  #editor: EditorArea;
  readonly sidebar: Sidebar;
  readonly sidebarLayout: SidebarLayout;
  readonly activityBar: ActivityBar;
  readonly statusBar: StatusBar;
  readonly keyRow: KeyRow;
  readonly notifier = new BackgroundNotifier();
  #quick = new QuickInput();
  #toasts = new Notifications();
  #build = new BuildIndicator();
  #banner: ConnectionBanner;
  #layout: EditorLayoutStore;
  #ops: TerminalOps;
  #wasOnline = false;
  /** The first catalogue since the page loaded has been seen (the startup terminal is decided on it). */
  #sawCatalogue = false;
  /** The server's sequence when the link last dropped (see serverRestarted). */
  #seqAtOffline = 0;
  #rejections = new RejectionNotice((text) => this.notify('error', text));
  readonly notify: Notify = (kind, message, actions = [], key) =>
    this.#toasts.show(kind, message, kind === 'error' ? icons.error : kind === 'warning' ? icons.warning : icons.info, actions, key);
  readonly dismissNotice = (key: string) => this.#toasts.dismiss(key);

  constructor(config: AppConfig, client: MultiHostClient) {
    this.config = config;
    this.client = client;
    this.replays = new Replays({ script: config.playerScript ?? '', style: config.playerStyle ?? '' });
    this.role = config.role || 'owner';
    this.clientId = client.clientId;
    const byId = (id: string) => document.getElementById(id)!;
    const workbenchEl = byId('workbench');
    workbenchEl.dataset.role = this.role;
    this.#banner = new ConnectionBanner(workbenchEl, byId('offline-banner'), {
      client,
      role: this.role,
      basePath: config.basePath,
      terminalId: config.terminalId,
      ended: () => this.#refreshInputAndStatus(),
    });
    this.control = new Control(client, this.role, this.notify, this.dismissNotice, (uri) => this.#controlChanged(uri), (uri) => this.#titleOfUri(uri), !!config.person);
    this.approvals = new Approvals({
      client,
      role: this.role,
      notify: this.notify,
      dismiss: this.dismissNotice,
      titleOf: (uri) => this.#titleOfUri(uri),
      changed: (uris) => this.#approvalsChanged(uris),
      shown: (uri) => !!this.#views.get(uri)?.visible,
      reveal: (uri) => this.#revealApproval(uri),
    });
    this.#editor = new EditorArea(byId('editor'), byId('editor-empty'), this);
    this.#views = new TerminalViews(
      this.#editor,
      { client, role: this.role, clientId: this.clientId, notify: this.notify, viewsChanged: () => this.#layout.save(), viewClosed: () => this.sidebar.refreshSelection(), knownTitle: (uri) => this.#knownTitle(uri) },
      this,
    );
    this.#layout = new EditorLayoutStore(this.#editor, {
      basePath: config.basePath,
      role: this.role,
      terminalId: config.terminalId,
      view: (uri) => this.#views.get(uri),
      open: (uri, focus) => this.openTerminal(uri, false, focus),
      focus: (v) => this.#focusView(v),
    });
    this.sidebar = new Sidebar(byId('sidebar'), this);
    document.body.append(this.#quick.element, this.#toasts.element);
    this.palette = new Palette(this.#quick, this.commands, this);
    this.#ops = new TerminalOps(
      { client, role: this.role, clientId: this.clientId, config, notify: this.notify, copyText: (t) => this.copyText(t), catalogue: () => this.#catalogue, titleOf: (uri) => this.#titleOfUri(uri) },
      this.#quick,
    );
    this.sidebarLayout = new SidebarLayout(workbenchEl, byId('sidebar'), byId('sidebar-sash'), () => this.#relayoutViews());
    this.activityBar = new ActivityBar(byId('activitybar'), this.sidebar, this.sidebarLayout, () => void this.openSettings());
    registerWorkbenchActions(this.commands, this);
    this.#applySkipShell();
    this.statusBar = new StatusBar(byId('statusbar'), this.#statusSource(), {
      showCommands: () => this.palette.showCommands(),
      retryNow: () => client.retryNow(),
      takeControl: () => this.activeView && this.takeControl(this.activeView),
      goToCommand: () => this.activeView && this.palette.showCommandsOf(this.activeView),
      toggleNotifications: () => void this.commands.run('notifications.toggle'),
    });
    this.keyRow = new KeyRow(byId('statusbar'), () => this.activeView, this.role === 'viewer');
    buildWatermark(this.role, this.commands);
    this.#wireClient();
    this.commands.listen(document, () => this.#overlayOpen());
    document.addEventListener(OVERLAY_CLOSED, () => this.#focusActiveIfIdle());
    this.themes.onChange(() => this.#renderStatus());
    this.#layout.restore();
    this.statusBar.render();
    this.#updateBuild();
  }

  #statusQueued = false;

  /**
   * The status bar, drawn once before the next frame however many changes
   * asked for it: each draw measures the page (its items are fitted to the
   * bar's width), and each other host's answer asked for two. Nothing is
   * painted in between, so nobody sees the difference. (A hidden page draws
   * it when it is shown again.)
   */
  #renderStatus(): void {
    if (this.#statusQueued) return;
    this.#statusQueued = true;
    requestAnimationFrame(() => {
      this.#statusQueued = false;
      this.statusBar.render();
    });
  }

  #statusSource(): StatusSource {
    return {
      client: this.client,
      role: this.role,
      person: this.config.person ?? '',
      clientId: this.clientId,
      version: this.config.version,
      endedTitle: () => this.#banner.endedTitle,
      activeView: () => this.activeView,
      notificationsOn: () => this.notifier.enabled,
      holderLabel: (uri, claim) => this.control.holderLabel(uri, claim),
    };
  }

  // ---- client wiring ----

  #wireClient(): void {
    const c = this.client;
    c.on('state', (s, d) => this.#onConnection(s, d));
    c.on('hosts', () => this.#onHosts());
    c.on('latency', () => this.#renderStatus());
    c.on('snapshot', (ch, st, reason) => {
      if (ch === ROOT_CHANNEL) return this.#onRoot(st as RootState, reason === 'reinitialize');
      const v = this.#views.get(ch);
      if (v) {
        v.onSnapshot(st as TerminalState, (id) => c.commandMeta(ch, id));
        markPrompt(v);
        if (v === this.#editor.activeView) this.#layout.revealPendingDeepLink(v);
      }
      if (reason === 'reinitialize' || reason === 'reconnect') this.#renderStatus();
    });
    c.on('action', (env, st, _own, replayed) => {
      if (env.channel === ROOT_CHANNEL) return this.#onRoot(st as RootState);
      this.#views.get(env.channel)?.onAction(env, st as TerminalState, replayed);
      if (isTerminalAction(env.action) && env.action.type === 'terminal/claimed' && !(env.action.claim.kind === 'client' && env.action.claim.clientId === this.clientId)) this.control.claimMoved(env.channel);
      const a = env.action;
      if (isTerminalAction(a) && a.type === 'terminal/exited') this.#onExited(env.channel, a.exitCode);
    });
    c.on('rejected', (env, reason) => this.#rejections.show(env.action.type, reason));
    // Output skipped to keep up: a mark in the terminal, a word to the screen reader.
    routeSkips(c, (uri) => this.#views.get(uri), (uri) => this.#titleOfUri(uri), new SkipAnnouncer(announce));
    c.on('missing', (ch) => {
      const v = this.#views.get(ch);
      if (!v) return;
      this.notify('warning', `Terminal “${this.titleOf(v)}” no longer exists on the server.`);
      this.#closeView(v, false);
    });
    c.on('view', (ch, st) => {
      // Predicted (pending) changes: e.g. a rename shows at once.
      const v = this.#views.get(ch);
      if (v && st) this.#editor.renderTabs();
      if (v && v === this.#editor.activeView) this.#renderStatus();
    });
  }

  #onRoot(st: RootState, reinitialized = false): void {
    const list = st.terminals ?? [];
    const first = !this.#sawCatalogue;
    this.#sawCatalogue = true;
    const before = new Set(this.#catalogue.map((t) => t.resource));
    this.#catalogue = list;
    this.#catalogueByUri = new Map(list.map((t) => [t.resource, t]));
    for (const t of list) this.#nameMemory.note(t.resource, t.title);
    this.sidebar.renderTerminals(list);
    if (first) performance.mark('termhost:sidebar');
    const now = new Set(list.map((t) => t.resource));
    // The home server forgot us: a restart (one banner says it for every terminal) or an expired reconnect window.
    const home = (uris: Set<string>) => [...uris].filter((u) => !splitHostUri(u).host);
    const restarted = reinitialized && serverRestarted(this.#seqAtOffline, this.client.lastSeenServerSeq, home(before), home(now));
    if (restarted) this.#banner.showRestarted([...before].some((uri) => now.has(uri)));
    // Terminals disposed elsewhere, or gone with a restart: close their tabs.
    for (const v of [...this.#views.all()]) {
      if (before.has(v.uri) && !now.has(v.uri)) {
        const host = splitHostUri(v.uri).host;
        if (host) this.notify('info', `Terminal “${this.titleOf(v)}” is gone from ${host} (closed there, or ${host} restarted).`);
        else if (!restarted) this.notify('info', `Terminal “${this.titleOf(v)}” was closed.`);
        this.#closeView(v, false);
      }
    }
    if (first || restarted) this.#openStartupTerminal(list.filter((t) => !splitHostUri(t.resource).host));
    this.#editor.renderTabs();
    for (const v of this.#views.all()) v.renderClaim(); // the claim lives in the catalogue
    this.#renderStatus();
  }

  /** A control request or presence came or went: redraw that terminal's claim bar and the tabs' avatars. */
  #controlChanged(uri: string): void {
    this.#views.get(uri)?.renderClaim();
    this.#editor.renderTabs();
    this.#renderStatus();
    this.sidebar.refreshHolders();
  }

  /** Approvals of these terminals came, were answered or left: their bars, tabs and rows. */
  #approvalsChanged(uris: Set<string>): void {
    for (const uri of uris) this.#views.get(uri)?.renderClaim();
    this.#editor.renderTabs();
    this.sidebar.refreshSelection();
  }

  /** Opens a terminal with its approval bar and puts the keyboard on it (a notification's Show). */
  #revealApproval(uri: string): void {
    const v = this.openTerminal(uri, false, false);
    requestAnimationFrame(() => {
      if (!v.focusApproval()) v.focus();
    });
  }

  /** ViewHost: what a terminal's approval bar shows. */
  approvalBarOf(view: TerminalView) {
    return {
      title: this.titleOf(view),
      pending: this.approvals.pending(view.uri),
      answered: this.approvals.answered(view.uri),
      mayAnswer: this.#mayAnswer(view),
      answering: (id: string) => this.approvals.answering(id),
    };
  }

  /** Whether this page answers the terminal's first pending approval (the one its bar shows). */
  #mayAnswer(view: TerminalView): boolean {
    return mayAnswer(this.role, view.isHolder, this.approvals.pending(view.uri)[0]);
  }

  approvalWaits(view: TerminalView): boolean {
    return this.#mayAnswer(view);
  }

  answerApproval(id: string, decision: 'approve' | 'deny', reason?: string, alwaysAllow?: boolean): void {
    void this.approvals.answer(id, decision, reason, alwaysAllow);
  }

  /** ViewHost: a program of the agent's on this terminal waits for a password. */
  secretPromptUp(view: TerminalView): boolean {
    return agentSecretPrompt(this.#catalogue.find((t) => t.resource === view.uri), view.state?.claim);
  }

  /** What a terminal's tab and side bar row say while it waits for a person (EditorHost, SidebarHost). */
  attentionOf(uri: string): Attention | undefined {
    const info = this.#catalogueByUri.get(uri);
    return attentionOf(this.approvals.pending(uri), agentSecretPrompt(info, this.#views.get(uri)?.state?.claim));
  }

  /** Who controls a terminal, for people (SidebarHost). */
  holderLabel(uri: string, claim: TerminalClaim, away?: boolean): string {
    return this.control.holderLabel(uri, claim, away);
  }

  /** Initials of who is on a terminal, for its tab (EditorHost). */
  presenceOf(view: TerminalView): HTMLElement | null {
    return avatars(this.control.members(view.uri), (m) => this.control.label(m, view.uri), 3, this.control.viewers(view.uri));
  }

  /**
   * The owner's first visit (or any load, or a restart, with nothing
   * running) opens a terminal, focused, as ttyd and VS Code do: typing can
   * start at once. With nothing running, restored tabs and a deep link name
   * terminals that are gone (a restart, a re-login): they do not count.
   */
  #openStartupTerminal(list: TerminalInfo[]): void {
    if (this.role !== 'owner') {
      // A person signed in by SSO as a viewer or driver who lands on the
      // workbench, not on a terminal: show them one (the first running),
      // never an empty page under "shared with you to watch".
      const running = list.find((t) => t.lifecycle?.status !== 'exited');
      if (!this.config.terminalId && !this.activeView && running) this.openTerminal(running.resource);
      return;
    }
    if (list.length > 0 || !startupTerminal()) return;
    void this.#views.create(false, true);
  }

  #onExited(channel: string, code: number | undefined): void {
    const v = this.#views.get(channel);
    if (!v) return;
    this.notifier.notify(
      code === undefined || code === 0 ? `✓ ${this.titleOf(v)} exited` : `✗ ${this.titleOf(v)} exited with code ${code}`,
      'The terminal process ended.',
      `termhost-${v.id}`,
      () => this.#focusView(v),
    );
    this.#updateBuild();
    this.#editor.renderTabs();
  }

  #onConnection(s: ConnectionState, d: StateDetail): void {
    if (s === 'offline' && this.client.lastSeenServerSeq > 0) this.#seqAtOffline = this.client.lastSeenServerSeq;
    this.#banner.onConnection(s, d);
    if (s === 'online') {
      if (this.#wasOnline) this.notify('info', 'Reconnected to the server.');
      this.#wasOnline = true;
    }
    this.#refreshInputAndStatus();
  }

  #refreshInputAndStatus(): void {
    for (const v of this.#views.all()) v.updateInput();
    this.#renderStatus();
  }

  online(uri?: string): boolean {
    return uri === undefined ? this.client.online : this.client.onlineFor(uri);
  }

  // ---- other hosts ----

  /** A host's state or the host list changed: group headers, and its terminals greyed out or back. */
  #onHosts(): void {
    this.sidebar.refreshSelection();
    for (const v of this.#views.all()) {
      if (!splitHostUri(v.uri).host) continue;
      v.element.classList.toggle('host-down', !this.client.onlineFor(v.uri));
      v.updateInput();
    }
    this.#editor.renderTabs();
    this.#renderStatus();
  }

  /** SidebarHost: the hosts' groups (empty with no other host: the side bar is as it always was). */
  hostGroups(): HostGroupInfo[] {
    return hostGroupsOf(this.client);
  }

  /** SidebarHost: opens a host's own sign-in page in a new tab; the page retries when the person comes back. */
  signIn(host: string): void {
    const h = this.client.hosts().find((x) => x.name === host);
    if (!h?.login) return;
    window.open(h.login, '_blank', 'noopener');
  }

  /** SidebarHost: New Terminal on a host ("" the home host), remembered as the last used. */
  newTerminalOn(host: string): Promise<void> {
    setLastHost(host);
    return this.#views.create(false, false, host);
  }

  /** EditorHost: another host's terminal whose host is not connected. */
  hostDown(view: TerminalView): boolean {
    return !!splitHostUri(view.uri).host && !this.client.onlineFor(view.uri);
  }

  /** Where a terminal's files (recording, output) are: its host's base URL (the home host: this page's base path). */
  fileUrl(uri: string, file: 'recording.cast' | 'output.txt'): string {
    const { host, uri: own } = splitHostUri(uri);
    const base = host ? this.client.hosts().find((h) => h.name === host)?.url : undefined;
    return base ? hostApiUrl(base, downloadUrl('', own, file)) : downloadUrl(this.config.basePath, uri, file);
  }

  // ---- views ----

  /** Open (subscribe and show) a terminal. */
  openTerminal(uri: string, toSide = false, focus = true): TerminalView {
    return this.#views.open(uri, toSide, focus);
  }

  #closeView(v: TerminalView, unsubscribe = true): void {
    this.#views.close(v, unsubscribe);
    this.#focusActiveIfIdle();
  }

  #overlayOpen(): boolean {
    return this.#quick.open || !!document.querySelector('.dialog-overlay');
  }

  /**
   * Give the keyboard back to the active terminal when nothing holds it: a
   * picker or dialog closed (after its command ran, which may open another),
   * or the focused tab went away (Kill).
   */
  #focusActiveIfIdle(): void {
    requestAnimationFrame(() => {
      if (keyboardIdle() && !this.#overlayOpen()) this.activeView?.focus();
    });
  }

  focusNextTab(dir: 1 | -1): void {
    this.#editor.focusNext(dir);
  }

  #focusView(v: TerminalView): void {
    this.#views.focus(v);
  }

  #relayoutViews(): void {
    for (const v of this.#views.all()) v.scheduleLayout();
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

  // ---- terminal operations ----

  /**
   * New Terminal: on the home host, or with other hosts listed, where the
   * person picks (the last host used first, remembered in this browser).
   */
  async newTerminal(toSide = false): Promise<void> {
    const hosts = this.client.hosts();
    if (hosts.length === 0 || this.role !== 'owner') return this.#views.create(toSide);
    const last = lastHost();
    const homeName = this.client.homeName || location.host;
    const items = [{ host: '', name: homeName }, ...hosts.map((h) => ({ host: h.name, name: h.name }))].map((h) => {
      const status = this.client.statusOf(h.host);
      return { label: h.name, description: `${h.host ? '' : 'this host · '}${status === 'connected' ? 'connected' : status}`, icon: icons.terminal, host: h.host };
    });
    const i = items.findIndex((it) => it.host === last);
    if (i > 0) items.unshift(...items.splice(i, 1));
    const it = await this.#quick.pick(items, { title: 'New Terminal', placeholder: 'Where? (Enter: the host used last)' });
    if (!it) return;
    setLastHost(it.host);
    return this.#views.create(toSide, false, it.host);
  }

  rename(uri: string): Promise<void> {
    return this.#ops.rename(uri);
  }

  kill(uri: string): Promise<void> {
    return this.#ops.kill(uri);
  }

  takeControl(view: TerminalView): void {
    // The owner takes; anyone else asks the holder (granted at once when nobody here holds it).
    if (this.role === 'owner') this.#ops.takeControl(view.uri, view.isHolder);
    else if (!view.isHolder) void this.control.request(view.uri);
    // The claim bar's button disappears with the claim: keep typing here.
    if (view === this.activeView && !this.#overlayOpen()) view.focus();
  }

  // ---- commands to skip shell ----

  #applySkipShell(): void {
    const ids = commandsToSkipShell(this.commands.defaultSkipShell(), skipShellSetting());
    this.commands.skipShell = (a) => ids.has(a.id);
  }

  /** Edit the commands whose keys win over the shell, as "id, -id" (kept in this browser). */
  async configureSkipShell(): Promise<void> {
    const value = await this.#quick.input({
      title: 'Keyboard Shortcuts That Win Over the Shell',
      value: skipShellSetting().join(', '),
      prompt: `Default: ${this.commands.defaultSkipShell().join(', ')}. Add a command id to take its key from the shell too, or -id to let the shell have it (e.g. -terminal.open, view.toggleSidebar).`,
    });
    if (value === undefined) return;
    setSkipShellSetting(value.split(/[\s,]+/).filter(Boolean));
    this.#applySkipShell();
    this.notify('info', 'Keyboard shortcuts updated.');
  }

  share(uri: string): void {
    this.#ops.share(uri);
  }

  openSettings(focus?: SettingId): Promise<void> {
    return openSettingsEditor({ activeRenderer: () => this.activeView?.rendererLabel, isOwner: this.role === 'owner' }, focus);
  }

  /** A terminal's name if it has one (its title, or the catalogue's). */
  #knownTitle(uri: string): string | undefined {
    return this.client.state<TerminalState>(uri)?.title || this.#catalogueByUri.get(uri)?.title || undefined;
  }

  #titleOfUri(uri: string): string {
    return this.nameOf(uri);
  }

  /** A terminal's screen as text, for the sidebar's preview (x-termhost/screen). */
  readonly screenOf = async (uri: string): Promise<string[] | undefined> =>
    ((await this.client.request(extMethods.screen, { channel: uri })) as Partial<ScreenResult> | undefined)?.lines;

  /** A terminal's name in the sidebar, tabs and messages (terminalNames.ts). */
  nameOf(uri: string): string {
    return this.#nameMemory.name(uri, this.#knownTitle(uri) ?? this.#views.get(uri)?.state?.title);
  }

  /** Re-render the sidebar's rows when a view's state changed a name. */
  #refreshNames(): void {
    const uris = this.#catalogue.map((t) => t.resource);
    for (const v of this.#views.all()) if (!uris.includes(v.uri)) uris.push(v.uri);
    const now = uris.map((uri) => this.nameOf(uri)).join('\n');
    if (now === this.#shownNames) return;
    this.#shownNames = now;
    this.sidebar.refreshSelection();
  }

  terminalLink(view: TerminalView): string {
    const { host, uri } = splitHostUri(view.uri);
    return `${linkBase(this.client.serverMeta?.[extMeta.publicUrl], location.origin, this.config.basePath)}${deepLinkPath(host, terminalIdOf(uri))}`;
  }

  commandLink(view: TerminalView, commandId: string): string {
    return `${this.terminalLink(view)}#${encodeURIComponent(commandId)}`;
  }

  // ---- clipboard (ViewHost) ----

  copyText(text: string): Promise<void> {
    return clipboard.copyText(text, this.notify);
  }

  programCopy(text: string): void {
    clipboard.programCopy(text, this.notify);
  }

  confirmPaste(text: string): Promise<boolean> {
    return clipboard.confirmPaste(text);
  }

  isWorkbenchKey(e: KeyboardEvent): boolean {
    return this.commands.isWorkbenchKey(e);
  }

  typedInput(data: string): string {
    return this.keyRow.typed(data);
  }

  // ---- replays (player.ts) ----

  readonly replays: Replays;

  /** Whether a terminal has a recording (its catalogue entry's _meta). */
  hasRecording(view: TerminalView): boolean {
    return recordingStateOf(this.#catalogue.find((t) => t.resource === view.uri)) !== undefined;
  }

  /** ViewHost: the claim bar's Hand Back to Agent, once the owner took control of an agent's terminal. */
  handBackAction(view: TerminalView): { name: string; run: () => void } | undefined {
    const last = lastAgentOf(this.#catalogue.find((t) => t.resource === view.uri));
    return mayHandBack(this.role, view.state?.claim, last, view.exited) ? { name: last.name, run: () => this.handBack(view) } : undefined;
  }

  /** Gives the terminal back to the agent session that last held it (terminal/claimed; only the owner may). */
  handBack(view: TerminalView): void {
    const last = lastAgentOf(this.#catalogue.find((t) => t.resource === view.uri));
    if (!mayHandBack(this.role, view.state?.claim, last, view.exited)) return;
    if (this.client.dispatch(view.uri, { type: 'terminal/claimed', claim: handBackClaim(last) }) === undefined) this.notify('warning', 'Offline: cannot hand the terminal back.');
  }

  /** ViewHost: the Replay button of an exited terminal's info bar. */
  replayAction(view: TerminalView): (() => void) | undefined {
    return view.exited && this.hasRecording(view) ? () => this.replay(view) : undefined;
  }

  replay(view: TerminalView): void {
    const castUrl = this.fileUrl(view.uri, 'recording.cast');
    const runsCommand = this.#catalogue.find((t) => t.resource === view.uri)?._meta?.[extMeta.runsCommand] === true;
    const target = { title: this.#titleOfUri(view.uri), castUrl, exited: view.exited, exitCode: view.state && exitCodeOf(view.state), runsCommand };
    this.replays.open(target, view.element, () => view.focus());
  }

  // ---- ViewHost ----

  focused(view: TerminalView): void {
    markPrompt(view);
    if (this.#editor.activeView !== view) {
      const g = this.#editor.groupOf(view);
      if (g) this.#editor.setActiveGroup(g);
    }
    this.activated(view);
  }

  changed(view: TerminalView, what: 'state' | 'commands' | 'size' | 'status'): void {
    const active = view === this.activeView;
    if (what === 'commands' && active) this.sidebar.renderCommands(view);
    if (what === 'state' || what === 'status') {
      this.#editor.renderTabs();
      this.#refreshNames();
    }
    if (active) {
      this.#renderStatus();
      this.#updateBuild();
    }
    if (what === 'state') this.#layout.save();
  }

  commandFinished(view: TerminalView, c: CommandRecord): void {
    const s = commandStatus(c);
    this.notifier.notify(
      s === 'failure' ? `✗ ${commandLabel(c.commandLine, 80)} (exit ${c.exitCode})` : `✓ ${commandLabel(c.commandLine, 80)}`,
      `${this.titleOf(view)}${c.durationMs !== undefined ? ` · ${formatDuration(c.durationMs)}` : ''}`,
      `termhost-${view.id}`,
      () => {
        this.#focusView(view);
        view.revealCommand(c.commandId);
      },
    );
  }

  // ---- EditorHost ----

  activated(view: TerminalView | undefined): void {
    if (view) this.approvals.shown(view.uri);
    this.sidebar.renderCommands(view);
    this.sidebar.refreshSelection();
    this.#renderStatus();
    this.#updateBuild();
    this.#layout.showInUrl(view);
    this.#layout.save();
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
    const host = splitHostUri(view.uri).host;
    return host ? `${this.nameOf(view.uri)} (${host})` : this.nameOf(view.uri);
  }

  layoutChanged(): void {
    // The editor area reports its first layout from its constructor, before
    // the store exists; nothing is saved before the restore anyway.
    this.#layout?.save();
  }

  // ---- SidebarHost ----

  revealCommand(view: TerminalView, commandId: string): void {
    this.#focusView(view);
    if (view.revealCommand(commandId)) this.#layout.showInUrl(view, commandId);
  }

  copyCommandOutput(view: TerminalView, commandId: string): void {
    void view.copyCommandOutput(commandId);
  }

  // ---- title and favicon ----

  #updateBuild(): void {
    const v = this.activeView;
    const st = v?.status;
    this.#build.update(v && st ? { kind: st.kind, code: st.code, title: this.titleOf(v) } : { kind: 'none', title: '' });
  }

  // ---- introspection (the test build's hook, testhook.ts) ----

  get views(): TerminalView[] {
    return [...this.#views.all()];
  }

  viewOf(id?: string): TerminalView | undefined {
    return id ? this.#views.get(terminalUri(id)) : this.activeView;
  }

  get catalogue(): TerminalInfo[] {
    return this.#catalogue;
  }

  runAction(id: string): void | Promise<void> {
    return this.commands.run(id);
  }
}
