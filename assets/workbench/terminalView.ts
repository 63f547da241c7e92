// One terminal in the editor area: xterm.js with its addons, fed from the
// terminal channel's snapshot and live actions, with shell-integration
// decorations, a find widget, and driver/viewer sizing.

import { Terminal, type IDecoration, type IDisposable, type IMarker } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import { WebglAddon } from '@xterm/addon-webgl';
import { SearchAddon } from '@xterm/addon-search';
import { WebLinksAddon } from '@xterm/addon-web-links';
import { Unicode11Addon } from '@xterm/addon-unicode11';
import type { AhpClient } from '../ahp/client';
import { exitCodeOf, hasExited, terminalIdOf, type ActionEnvelope, type TerminalCommandPart, type TerminalState } from '../ahp/types';
import { h, clear, svg, primary } from './dom';
import { icons } from './icons';
import type { Themes } from './theme';
import { WriteQueue } from './writequeue';
import { guardReplies, isFocusReport } from './replies';
import { handleOsc52 } from './clipboard';
import { clipboardWriteAllowed } from './settings';
import { formatDuration, stripAnsi, claimLabel } from './format';

export type CommandStatus = 'running' | 'success' | 'failure';

export interface CommandRecord {
  commandId: string;
  commandLine: string;
  timestamp: number;
  isComplete: boolean;
  exitCode?: number;
  durationMs?: number;
  marker?: IMarker;
  decoration?: IDecoration;
}

export function commandStatus(c: { isComplete: boolean; exitCode?: number }): CommandStatus {
  if (!c.isComplete) return 'running';
  return c.exitCode === undefined || c.exitCode === 0 ? 'success' : 'failure';
}

export interface ViewHost {
  client: AhpClient;
  themes: Themes;
  role: string;
  /** Whether the connection is up (input allowed). */
  online(): boolean;
  focused(view: TerminalView): void;
  changed(view: TerminalView, what: 'state' | 'commands' | 'size' | 'status'): void;
  commandFinished(view: TerminalView, c: CommandRecord): void;
  confirmPaste(text: string): Promise<boolean>;
  notify(kind: 'info' | 'error' | 'warning', message: string): void;
  copyText(text: string): Promise<void>;
  /** A program's OSC 52 write, already allowed by the settings and focus. */
  programCopy(text: string): void;
  takeControl(view: TerminalView): void;
  commandLink(view: TerminalView, commandId: string): string;
  /** Keys the workbench handles itself (xterm must ignore them). */
  isWorkbenchKey(e: KeyboardEvent): boolean;
}

let webglContexts = 0;
const MAX_WEBGL = 8;

export class TerminalView {
  readonly uri: string;
  readonly id: string;
  readonly element: HTMLElement;
  readonly term: Terminal;
  state: TerminalState | undefined;
  commands: CommandRecord[] = [];
  renderer: 'webgl' | 'dom' = 'dom';
  /** Set once the first snapshot is on screen. */
  loaded = false;

  #host: ViewHost;
  #fit = new FitAddon();
  #search = new SearchAddon({ highlightLimit: 2000 });
  #webgl: WebglAddon | undefined;
  #queue: WriteQueue;
  #scaleBox: HTMLElement;
  #xtermBox: HTMLElement;
  #infobar: HTMLElement;
  #claimbar: HTMLElement;
  #find: FindWidget;
  #hover: HTMLElement | undefined;
  #hoverTimer: ReturnType<typeof setTimeout> | undefined;
  #hoverCleanup: (() => void) | undefined;
  #resizeTimer: ReturnType<typeof setTimeout> | undefined;
  #layoutFrame = 0;
  #ro: ResizeObserver;
  #visible = false;
  #opened = false;
  #jumpLine: number | undefined;
  #jumpViewport: number | undefined;
  #pendingDeepLink: string | undefined;
  #disposables: IDisposable[] = [];
  #unsubscribe: (() => void)[] = [];
  #lastSentSize = '';
  /** xterm is about to send a focus report that this tab may not send. */
  #dropFocusReport = false;

  constructor(uri: string, host: ViewHost) {
    this.uri = uri;
    this.id = terminalIdOf(uri);
    this.#host = host;
    this.term = new Terminal({
      allowProposedApi: true,
      fontFamily: "'Droid Sans Mono', 'DejaVu Sans Mono', Menlo, Monaco, Consolas, 'Liberation Mono', 'Courier New', monospace",
      fontSize: 14,
      lineHeight: 1.1,
      cursorBlink: true,
      cursorStyle: 'block',
      cursorInactiveStyle: 'outline',
      scrollback: 10000,
      theme: host.themes.xterm,
      overviewRuler: { width: 10 },
      minimumContrastRatio: host.themes.kind.startsWith('hc') ? 7 : 4.5,
      macOptionIsMeta: false,
      rightClickSelectsWord: true,
    });
    this.#queue = new WriteQueue({ write: (d, cb) => this.term.write(d, cb) });
    this.#xtermBox = h('div.terminal-xterm');
    this.#scaleBox = h('div.terminal-scale', null, this.#xtermBox);
    this.#infobar = h('div.terminal-infobar', { hidden: true });
    this.#claimbar = h('div.terminal-claimbar', { hidden: true });
    this.#find = new FindWidget(this.#search, host, () => this.term.focus());
    this.element = h(
      'div.terminal-view',
      { 'data-terminal': this.id, tabindex: -1 },
      this.#infobar,
      h('div.terminal-body', null, this.#scaleBox, this.#find.element, this.#claimbar),
    );
    this.#ro = new ResizeObserver(() => this.scheduleLayout());
    this.#ro.observe(this.element);
    this.#unsubscribe.push(host.themes.onChange(() => this.#applyTheme()));
  }

  // ---- lifecycle ----

  /** Attach xterm to the DOM (first time the view is shown). */
  #open(): void {
    if (this.#opened) return;
    this.#opened = true;
    const t = this.term;
    t.open(this.#xtermBox);
    t.loadAddon(this.#fit);
    t.loadAddon(this.#search);
    t.loadAddon(new Unicode11Addon());
    t.unicode.activeVersion = '11';
    this.#disposables.push(
      ...guardReplies(t.parser, {
        mayAnswer: () => this.#mayAnswer(),
        focusReportSuppressed: () => {
          // xterm reports synchronously, right after this hook returns.
          this.#dropFocusReport = true;
          queueMicrotask(() => (this.#dropFocusReport = false));
        },
      }),
      handleOsc52(t.parser, {
        mayWrite: () => this.#mayWriteClipboard(),
        write: (text) => this.#host.programCopy(text),
      }),
    );
    t.loadAddon(
      new WebLinksAddon((e, uri) => {
        if (primary(e)) window.open(uri, '_blank', 'noopener,noreferrer');
        else host_notifyLinkHint(this.#host);
      }),
    );
    this.#loadWebgl();
    t.attachCustomKeyEventHandler((e) => {
      if (e.type === 'keydown' && this.#host.isWorkbenchKey(e)) return false;
      return true;
    });
    this.#disposables.push(
      t.onData((d) => this.#input(d)),
      t.onBinary((d) => this.#input(d)),
      t.onTitleChange(() => {
        /* titles come from the server (terminal/titleChanged) */
      }),
    );
    t.textarea?.addEventListener('focus', () => this.#host.focused(this));
    // Confirm before pasting several lines (capture: before xterm's handler).
    t.textarea?.addEventListener(
      'paste',
      (e) => {
        const text = e.clipboardData?.getData('text/plain') ?? '';
        if (!/\r?\n/.test(text.replace(/\r?\n$/, ''))) return;
        e.preventDefault();
        e.stopImmediatePropagation();
        void this.paste(text);
      },
      true,
    );
  }

  #loadWebgl(): void {
    if (localStorage.getItem('termhost.renderer') === 'dom' || webglContexts >= MAX_WEBGL) return;
    try {
      const gl = new WebglAddon();
      gl.onContextLoss(() => {
        // Fall back to the DOM renderer; xterm redraws by itself.
        this.#disposeWebgl();
        this.#host.changed(this, 'status');
      });
      this.term.loadAddon(gl);
      this.#webgl = gl;
      webglContexts++;
      this.renderer = 'webgl';
    } catch (e) {
      console.info('termhost: WebGL renderer unavailable, using DOM', e);
      this.renderer = 'dom';
    }
  }

  #disposeWebgl(): void {
    if (!this.#webgl) return;
    try {
      this.#webgl.dispose();
    } catch {
      /* already gone */
    }
    this.#webgl = undefined;
    webglContexts--;
    this.renderer = 'dom';
  }

  show(): void {
    this.#visible = true;
    this.element.hidden = false;
    this.#open();
    this.scheduleLayout();
  }

  hide(): void {
    this.#visible = false;
    this.element.hidden = true;
  }

  get visible(): boolean {
    return this.#visible;
  }

  focus(): void {
    if (!this.#opened) this.show();
    this.term.focus();
  }

  dispose(): void {
    this.#ro.disconnect();
    this.#hideHover();
    for (const d of this.#disposables) d.dispose();
    for (const u of this.#unsubscribe) u();
    this.#disposeWebgl();
    this.term.dispose();
    this.element.remove();
  }

  // ---- roles and ownership ----

  get isHolder(): boolean {
    const c = this.state?.claim;
    return c?.kind === 'client' && c.clientId === this.#host.client.clientId;
  }

  get exited(): boolean {
    return !!this.state && hasExited(this.state);
  }

  get exitCode(): number | undefined {
    return this.state ? exitCodeOf(this.state) : undefined;
  }

  get canType(): boolean {
    return this.#host.online() && this.#host.role !== 'viewer' && !this.exited && this.loaded;
  }

  /** Re-evaluate input gating (connection state or role changed). */
  updateInput(): void {
    if (!this.#opened) return;
    this.term.options.disableStdin = !this.canType;
    this.#renderInfobar();
  }

  /**
   * Whether this tab answers the question xterm is parsing now (device
   * attributes, cursor position, colours …; see replies.ts). Never for
   * history (a snapshot or a reconnect replay: its questions are from
   * programs long gone), never on a page that cannot type (viewer, offline,
   * exited), and among several tabs on one terminal only the one whose
   * terminal has the keyboard focus in a focused window: at most one tab
   * answers, and it is the one its user works in. A program that asks while
   * no tab has focus gets no answer; programs wait a moment and go on.
   */
  #mayAnswer(): boolean {
    return !this.#queue.parsingReplay && this.canType && this.#hasFocus();
  }

  #hasFocus(): boolean {
    return document.hasFocus() && !!this.term.textarea && document.activeElement === this.term.textarea;
  }

  /** OSC 52 writes: only live output, on a page that can type, allowed in the settings, window focused. */
  #mayWriteClipboard(): boolean {
    return !this.#queue.parsingReplay && this.canType && clipboardWriteAllowed() && document.hasFocus();
  }

  #input(data: string): void {
    if (this.#dropFocusReport && isFocusReport(data)) {
      this.#dropFocusReport = false;
      return;
    }
    if (!this.canType) return;
    this.#host.client.dispatch(this.uri, { type: 'terminal/input', data });
  }

  async paste(text: string): Promise<void> {
    if (!this.canType) return;
    const body = text.replace(/\r?\n$/, '');
    if (/\r?\n/.test(body) && !(await this.#host.confirmPaste(text))) return;
    this.term.paste(text);
    this.term.focus();
  }

  // ---- protocol input ----

  /** Redraw from a snapshot: clear, resize to the pty, write the content. */
  onSnapshot(state: TerminalState): void {
    const first = !this.loaded;
    this.state = state;
    this.loaded = true;
    this.#queue.discardQueued();
    const cols = state.cols;
    const rows = state.rows;
    this.#queue.then(() => {
      this.#disposeDecorations();
      this.term.reset();
      if (cols && rows && (cols !== this.term.cols || rows !== this.term.rows)) this.term.resize(cols, rows);
    });
    this.commands = [];
    for (const p of state.content) {
      // All of it is history: write it as replay (no answers to its questions).
      if (p.type === 'unclassified') {
        this.#queue.write(p.value, true);
      } else {
        const rec = this.#recordFrom(p);
        this.commands.push(rec);
        this.#queue.then(() => this.#placeMarker(rec));
        this.#queue.write(p.output, true);
        if (p.isComplete) this.#queue.then(() => this.#decorate(rec));
      }
    }
    this.#queue.then(() => {
      this.#lastSentSize = '';
      this.scheduleLayout();
      if (this.#pendingDeepLink) {
        const id = this.#pendingDeepLink;
        this.#pendingDeepLink = undefined;
        this.revealCommand(id);
      } else if (first) {
        this.term.scrollToBottom();
      }
    });
    this.updateInput();
    this.#host.changed(this, 'state');
    this.#host.changed(this, 'commands');
  }

  /** `replayed`: history from a reconnect replay (see AhpClient's action event). */
  onAction(env: ActionEnvelope, state: TerminalState, replayed = false): void {
    const prev = this.state;
    this.state = state;
    const a = env.action as Record<string, unknown> & { type: string };
    switch (a.type) {
      case 'terminal/data':
        this.#queue.write(a.data as string, replayed);
        return; // hot path: no re-render of the chrome
      case 'terminal/commandExecuted': {
        const rec: CommandRecord = {
          commandId: a.commandId as string,
          commandLine: a.commandLine as string,
          timestamp: a.timestamp as number,
          isComplete: false,
        };
        this.commands.push(rec);
        this.#queue.then(() => this.#placeMarker(rec));
        this.#host.changed(this, 'commands');
        this.#host.changed(this, 'status');
        return;
      }
      case 'terminal/commandFinished': {
        const rec = this.commands.find((c) => c.commandId === a.commandId);
        if (!rec) return;
        rec.isComplete = true;
        rec.exitCode = a.exitCode as number | undefined;
        rec.durationMs = a.durationMs as number | undefined;
        this.#queue.then(() => this.#decorate(rec));
        this.#host.changed(this, 'commands');
        this.#host.changed(this, 'status');
        this.#host.commandFinished(this, rec);
        return;
      }
      case 'terminal/cleared':
        this.#queue.then(() => {
          this.#disposeDecorations();
          this.term.clear();
        });
        this.commands = [];
        this.#host.changed(this, 'commands');
        this.#host.changed(this, 'status');
        return;
      case 'terminal/resized':
        this.scheduleLayout();
        this.#host.changed(this, 'size');
        return;
      case 'terminal/claimed':
        this.#lastSentSize = '';
        this.scheduleLayout();
        this.#renderInfobar();
        this.#host.changed(this, 'state');
        return;
      case 'terminal/exited':
        this.updateInput();
        this.#host.changed(this, 'status');
        this.#host.changed(this, 'state');
        return;
      default:
        if (prev?.title !== state.title || prev?.cwd !== state.cwd) this.#host.changed(this, 'state');
    }
  }

  #recordFrom(p: TerminalCommandPart): CommandRecord {
    return {
      commandId: p.commandId,
      commandLine: p.commandLine,
      timestamp: p.timestamp,
      isComplete: p.isComplete,
      exitCode: p.exitCode,
      durationMs: p.durationMs,
    };
  }

  // ---- shell integration decorations ----

  #placeMarker(rec: CommandRecord): void {
    if (!this.#opened) this.#open();
    const b = this.term.buffer.active;
    // At commandExecuted the cursor sits at the start of the output line;
    // the command line itself is the line above.
    const offset = b.cursorX === 0 && b.baseY + b.cursorY > 0 ? -1 : 0;
    rec.marker = this.term.registerMarker(offset);
    this.#decorate(rec);
  }

  #decorate(rec: CommandRecord): void {
    if (!rec.marker || rec.marker.isDisposed) return;
    rec.decoration?.dispose();
    const status = commandStatus(rec);
    const colors = this.#host.themes.colors;
    const d = this.term.registerDecoration({
      marker: rec.marker,
      anchor: 'left',
      x: 0,
      width: 1,
      overviewRulerOptions: status === 'running' ? undefined : { color: status === 'failure' ? colors.failure : colors.success, position: 'left' },
    });
    if (!d) return;
    rec.decoration = d;
    d.onRender((el) => {
      if (el.dataset.cmd === rec.commandId && el.dataset.status === status) return;
      el.dataset.cmd = rec.commandId;
      el.dataset.status = status;
      el.classList.add('terminal-command-decoration');
      el.classList.remove('running', 'success', 'failure');
      el.classList.add(status);
      el.setAttribute('aria-label', describeCommand(rec));
      if (!el.dataset.bound) {
        el.dataset.bound = '1';
        el.addEventListener('mouseenter', () => this.#showHover(rec, el));
        el.addEventListener('mouseleave', () => this.#scheduleHideHover());
        el.addEventListener('click', (e) => {
          e.stopPropagation();
          this.#showHover(rec, el, true);
        });
      }
    });
  }

  #disposeDecorations(): void {
    for (const c of this.commands) {
      c.decoration?.dispose();
      c.marker?.dispose();
      c.decoration = undefined;
      c.marker = undefined;
    }
    this.#hideHover();
  }

  #showHover(rec: CommandRecord, anchor: HTMLElement, sticky = false): void {
    clearTimeout(this.#hoverTimer);
    this.#hideHover();
    const status = commandStatus(rec);
    const rows: (HTMLElement | null)[] = [
      h('div.hover-command', null, h('code', null, rec.commandLine || '(empty command line)')),
      h(
        'div.hover-meta',
        null,
        svg(status === 'running' ? icons.loading : status === 'failure' ? icons.error : icons.pass, `codicon status-${status}`),
        h('span', null, status === 'running' ? 'Running' : rec.exitCode === undefined ? 'Finished' : `Exit code ${rec.exitCode}`),
        rec.durationMs !== undefined ? h('span.hover-sep', null, '·') : null,
        rec.durationMs !== undefined ? h('span', null, formatDuration(rec.durationMs)) : null,
        h('span.hover-sep', null, '·'),
        h('span', null, new Date(rec.timestamp).toLocaleTimeString()),
      ),
      h(
        'div.hover-actions',
        null,
        h('a', { href: '#', onclick: (e: Event) => (e.preventDefault(), void this.copyCommandOutput(rec.commandId), this.#hideHover()) }, 'Copy Output'),
        h('a', { href: '#', onclick: (e: Event) => (e.preventDefault(), void this.#host.copyText(rec.commandLine), this.#hideHover()) }, 'Copy Command'),
        h('a', { href: '#', onclick: (e: Event) => (e.preventDefault(), void this.#host.copyText(this.#host.commandLink(this, rec.commandId)), this.#hideHover()) }, 'Copy Link'),
      ),
    ];
    const box = h('div.monaco-hover.command-hover', { role: 'tooltip' }, ...rows);
    document.body.appendChild(box);
    // Above the mark like VS Code's hovers, below it when there is no room.
    const r = anchor.getBoundingClientRect();
    const bw = box.offsetWidth;
    const bh = box.offsetHeight;
    const left = Math.max(4, Math.min(window.innerWidth - bw - 8, r.left - 4));
    const top = r.top - bh - 4 >= 4 ? r.top - bh - 4 : Math.min(window.innerHeight - bh - 8, r.bottom + 4);
    box.style.left = `${left}px`;
    box.style.top = `${Math.max(4, top)}px`;
    box.addEventListener('mouseenter', () => clearTimeout(this.#hoverTimer));
    box.addEventListener('mouseleave', () => this.#scheduleHideHover());
    this.#hover = box;
    // xterm re-creates decoration elements as it renders, so mouseleave may
    // never come: watch the pointer instead.
    const onMove = (e: MouseEvent) => {
      const t = e.target as Element | null;
      if (box.contains(t) || (t?.closest?.('.terminal-command-decoration') as HTMLElement | null)?.dataset.cmd === rec.commandId) {
        clearTimeout(this.#hoverTimer);
      } else if (!sticky) {
        this.#scheduleHideHover();
      }
    };
    const onDown = (e: MouseEvent) => {
      if (!box.contains(e.target as Node)) this.#hideHover();
    };
    document.addEventListener('mousemove', onMove, true);
    document.addEventListener('mousedown', onDown, true);
    this.#hoverCleanup = () => {
      document.removeEventListener('mousemove', onMove, true);
      document.removeEventListener('mousedown', onDown, true);
    };
  }

  #scheduleHideHover(): void {
    clearTimeout(this.#hoverTimer);
    this.#hoverTimer = setTimeout(() => this.#hideHover(), 300);
  }

  #hideHover(): void {
    this.#hoverCleanup?.();
    this.#hoverCleanup = undefined;
    this.#hover?.remove();
    this.#hover = undefined;
  }

  #part(commandId: string): TerminalCommandPart | undefined {
    return this.state?.content.find((p): p is TerminalCommandPart => p.type === 'command' && p.commandId === commandId);
  }

  /** Plain-text output of a command (from the terminal state). */
  commandOutput(commandId: string): string | undefined {
    const p = this.#part(commandId);
    return p ? stripAnsi(p.output) : undefined;
  }

  async copyCommandOutput(commandId?: string): Promise<void> {
    const id = commandId ?? [...this.commands].reverse().find((c) => c.isComplete)?.commandId ?? this.commands.at(-1)?.commandId;
    if (!id) {
      this.#host.notify('info', 'No command output to copy: shell integration has not reported a command yet.');
      return;
    }
    const out = this.commandOutput(id);
    if (out === undefined) {
      this.#host.notify('warning', 'The output of that command is no longer in the scrollback.');
      return;
    }
    await this.#host.copyText(out);
  }

  /** Scroll to a command and highlight it; false if unknown. */
  revealCommand(commandId: string): boolean {
    if (!this.loaded) {
      this.#pendingDeepLink = commandId;
      return true;
    }
    const rec = this.commands.find((c) => c.commandId === commandId);
    if (!rec) return false;
    if (!rec.marker) {
      this.#pendingDeepLink = commandId;
      this.#queue.then(() => {
        if (this.#pendingDeepLink === commandId) {
          this.#pendingDeepLink = undefined;
          this.revealCommand(commandId);
        }
      });
      return true;
    }
    if (rec.marker.isDisposed || rec.marker.line < 0) return false;
    this.#scrollToLine(rec.marker.line);
    this.#flash(rec.marker);
    return true;
  }

  /** Ctrl/Cmd+Up/Down: previous / next command relative to the viewport. */
  jumpCommand(dir: -1 | 1): void {
    const lines = this.commands
      .map((c) => c.marker)
      .filter((m): m is IMarker => !!m && !m.isDisposed && m.line >= 0)
      .map((m) => m.line)
      .sort((a, b) => a - b);
    if (lines.length === 0) return;
    const b = this.term.buffer.active;
    const ref = this.#jumpViewport === b.viewportY && this.#jumpLine !== undefined ? this.#jumpLine : dir < 0 ? b.viewportY + this.term.rows : b.viewportY - 1;
    const target = dir < 0 ? [...lines].reverse().find((l) => l < ref) : lines.find((l) => l > ref);
    if (target === undefined) {
      if (dir > 0) this.term.scrollToBottom();
      this.#jumpLine = undefined;
      return;
    }
    this.#scrollToLine(target);
    this.#jumpLine = target;
    this.#jumpViewport = this.term.buffer.active.viewportY;
    const m = this.commands.find((c) => c.marker?.line === target)?.marker;
    if (m) this.#flash(m);
  }

  #scrollToLine(line: number): void {
    // Leave one line of context above the command when possible.
    this.term.scrollToLine(Math.max(0, line - 1));
  }

  #flash(marker: IMarker): void {
    const d = this.term.registerDecoration({ marker, width: this.term.cols, layer: 'bottom' });
    d?.onRender((el) => el.classList.add('terminal-command-highlight'));
    setTimeout(() => d?.dispose(), 1200);
  }

  // ---- layout and sizing ----

  scheduleLayout(): void {
    if (this.#layoutFrame) return;
    this.#layoutFrame = requestAnimationFrame(() => {
      this.#layoutFrame = 0;
      this.layout();
    });
  }

  layout(): void {
    if (!this.#visible || !this.#opened || !this.element.isConnected) return;
    const body = this.element.querySelector('.terminal-body') as HTMLElement;
    if (body.clientWidth === 0 || body.clientHeight === 0) return;
    const st = this.state;
    if (!st || this.isHolder || !st.cols || !st.rows) {
      // We size the pty: fit to the pane.
      this.#scaleBox.style.transform = '';
      this.#scaleBox.classList.remove('scaled');
      this.#xtermBox.style.width = '';
      this.#xtermBox.style.height = '';
      const dims = this.#fit.proposeDimensions();
      if (dims && dims.cols > 1 && dims.rows > 1 && Number.isFinite(dims.cols)) {
        if (dims.cols !== this.term.cols || dims.rows !== this.term.rows) this.term.resize(dims.cols, dims.rows);
        if (st && this.isHolder) this.#sendSize(dims.cols, dims.rows);
      }
    } else {
      // Someone else sizes the pty: mirror its size and scale to fit.
      if (st.cols !== this.term.cols || st.rows !== this.term.rows) this.term.resize(st.cols, st.rows);
      const screen = this.#xtermBox.querySelector('.xterm-screen') as HTMLElement | null;
      const xt = this.#xtermBox.querySelector('.xterm') as HTMLElement | null;
      if (screen && xt) {
        const cs = getComputedStyle(xt);
        const w = screen.offsetWidth + parseFloat(cs.paddingLeft) + parseFloat(cs.paddingRight) + 14;
        const hh = screen.offsetHeight + parseFloat(cs.paddingTop) + parseFloat(cs.paddingBottom);
        this.#xtermBox.style.width = `${w}px`;
        this.#xtermBox.style.height = `${hh}px`;
        const s = Math.min(1, body.clientWidth / w, body.clientHeight / hh);
        this.#scaleBox.style.transform = s < 1 ? `scale(${s})` : '';
        this.#scaleBox.classList.toggle('scaled', s < 1);
      }
    }
    this.#renderInfobar();
    this.#host.changed(this, 'size');
  }

  /** Proposed size for this pane (for createTerminal). */
  proposeSize(): { cols: number; rows: number } | undefined {
    this.#open();
    const d = this.#fit.proposeDimensions();
    if (!d || !Number.isFinite(d.cols) || d.cols < 2 || d.rows < 2) return undefined;
    return { cols: d.cols, rows: d.rows };
  }

  #sendSize(cols: number, rows: number): void {
    const key = `${cols}x${rows}`;
    if (this.state?.cols === cols && this.state?.rows === rows) {
      this.#lastSentSize = key;
      return;
    }
    if (key === this.#lastSentSize || !this.#host.online() || this.#host.role === 'viewer' || this.exited) return;
    clearTimeout(this.#resizeTimer);
    this.#resizeTimer = setTimeout(() => {
      if (!this.isHolder || this.term.cols !== cols || this.term.rows !== rows) return;
      if (this.#host.client.dispatch(this.uri, { type: 'terminal/resized', cols, rows }) !== undefined) this.#lastSentSize = key;
    }, 80);
  }

  #renderInfobar(): void {
    const bar = this.#infobar;
    const claim = this.#claimbar;
    clear(bar);
    clear(claim);
    bar.hidden = claim.hidden = true;
    const st = this.state;
    if (!st) return;
    if (hasExited(st)) {
      const code = exitCodeOf(st);
      bar.className = 'terminal-infobar ' + (code === undefined || code === 0 ? 'info' : 'error');
      bar.append(
        svg(code === undefined || code === 0 ? icons.info : icons.error),
        h('span', null, code === undefined ? 'The terminal process exited.' : `The terminal process exited with code ${code}.`),
      );
      bar.hidden = false;
      return;
    }
    if (!this.isHolder) {
      // A floating note, so it takes no rows from the mirrored pty size.
      const scaled = this.#scaleBox.classList.contains('scaled');
      claim.append(
        svg(icons.eye),
        h('span', null, `Size set by ${claimLabel(st.claim, this.#host.client.clientId)} · ${st.cols ?? '?'}×${st.rows ?? '?'}${scaled ? ' (scaled)' : ''}`),
      );
      if (this.#host.role !== 'viewer') {
        claim.append(h('button.link-button', { type: 'button', title: 'Size this terminal to your window (terminal/claimed)', onclick: () => this.#host.takeControl(this) }, 'Take Control'));
      }
      claim.hidden = false;
    }
  }

  // ---- find ----

  openFind(): void {
    this.#find.open(this.term.getSelection());
  }

  // ---- theme ----

  #applyTheme(): void {
    const themes = this.#host.themes;
    this.term.options.theme = themes.xterm;
    this.term.options.minimumContrastRatio = themes.kind.startsWith('hc') ? 7 : 4.5;
    for (const c of this.commands) if (c.isComplete) this.#decorate(c);
    this.#find.applyTheme();
  }

  // ---- status for tabs, title, favicon ----

  /** Build status of this terminal: the exit, else the last command. */
  get status(): { kind: 'idle' | 'running' | 'success' | 'failure' | 'exited'; code?: number; label: string } {
    const st = this.state;
    if (st && hasExited(st)) {
      const code = exitCodeOf(st);
      return { kind: code === undefined || code === 0 ? 'exited' : 'failure', code, label: code === undefined ? 'exited' : `exited (${code})` };
    }
    const last = this.commands.at(-1);
    if (!last) return { kind: 'idle', label: '' };
    const s = commandStatus(last);
    if (s === 'running') return { kind: 'running', label: last.commandLine };
    return { kind: s, code: last.exitCode, label: last.commandLine };
  }

  /** Visible text of the whole buffer (test hook). */
  bufferText(): string {
    const b = this.term.buffer.active;
    const lines: string[] = [];
    for (let i = 0; i < b.length; i++) lines.push(b.getLine(i)?.translateToString(true) ?? '');
    return lines.join('\n').replace(/\s+$/, '');
  }

  get writeBacklog(): number {
    return this.#queue.inflight + this.#queue.queued;
  }

  /** Resolves once everything received so far is parsed. */
  drained(): Promise<void> {
    return new Promise((r) => this.#queue.then(r));
  }
}

function describeCommand(c: CommandRecord): string {
  const s = commandStatus(c);
  const what = s === 'running' ? 'running' : c.exitCode === undefined ? 'finished' : `exit code ${c.exitCode}`;
  return `${c.commandLine} — ${what}${c.durationMs !== undefined ? `, ${formatDuration(c.durationMs)}` : ''}`;
}

let linkHintShown = false;
function host_notifyLinkHint(host: ViewHost): void {
  if (linkHintShown) return;
  linkHintShown = true;
  host.notify('info', `Hold ${/Mac/.test(navigator.platform) ? 'Cmd' : 'Ctrl'} and click to follow a link.`);
}

/** VS Code-style find widget over the terminal. */
class FindWidget {
  readonly element: HTMLElement;
  #search: SearchAddon;
  #host: ViewHost;
  #input: HTMLInputElement;
  #count: HTMLElement;
  #opts = { caseSensitive: false, wholeWord: false, regex: false };
  #toggles: Record<string, HTMLElement> = {};
  #onClose: () => void;

  constructor(search: SearchAddon, host: ViewHost, onClose: () => void) {
    this.#search = search;
    this.#host = host;
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
    const c = this.#host.themes.colors;
    const hc = this.#host.themes.kind.startsWith('hc');
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
