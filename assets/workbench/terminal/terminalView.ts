// One terminal in the editor area: xterm.js fed from the terminal channel's
// snapshot and live actions through one write queue, and what the rest of
// the workbench asks of a terminal. Its parts live beside it: xterm setup,
// input gating, sizing, command tracking, marks and their hover, mark
// navigation, the find widget, the claim bar, skip marks and the WebGL budget.
// Snapshot and action handling stay in this one class: they must order the
// queue, the marks and the sizing together.

import type { IDisposable, Terminal } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import { SearchAddon } from '@xterm/addon-search';
import type { MultiHostClient } from '../../ahp/multihost';
import { extMeta, type SizePolicy } from '../../ahp/ext';
import { hasExited, isTerminalAction, terminalIdOf, type ActionEnvelope, type TerminalState } from '../../ahp/types';
import { inputParts } from '../../ahp/input';
import { h } from '../dom';
import type { Themes } from '../theme';
import { WriteQueue } from '../writequeue';
import { stripAnsi } from '../format';
import { CommandTracker, commandLabel, terminalStatus, type CommandRecord, type TerminalStatus } from './commandTracker';
import { CommandHover } from './commandHover';
import { DecorationAddon } from './decorationAddon';
import { MarkNavigation } from './markNavigation';
import { FindWidget } from './findWidget';
import { ClaimBar } from './claimBar';
import { ApprovalBar, type ApprovalBarInput } from './approvalBar';
import { mayDrive, type Control } from './presence';
import { WebglRenderer, rendererLabel } from './webglBudget';
import { TerminalSizing } from './sizing';
import { InputGate } from './inputGate';
import { SkipMarks, type SkipNotice } from './skipAhead';
import { applyXtermSettings, createXterm, minimumContrast, openXterm } from './xtermSetup';
import { onTerminalSettingsChange, terminalSettings, type TerminalSettings } from '../settings';
import { pasteClipboard } from '../clipboardActions';
import { linksWorkForOthers } from '../access';
import { confirmHyperlink, showFilePath } from '../linkDialog';

export interface ViewHost {
  client: MultiHostClient;
  themes: Themes;
  role: string;
  /** Whether the connection is up (input allowed). */
  /** Whether the terminal's host is connected (its input and size go nowhere else). */
  online(uri: string): boolean;
  focused(view: TerminalView): void;
  changed(view: TerminalView, what: 'state' | 'commands' | 'size' | 'status'): void;
  commandFinished(view: TerminalView, c: CommandRecord): void;
  confirmPaste(text: string): Promise<boolean>;
  notify(kind: 'info' | 'error' | 'warning', message: string): void;
  copyText(text: string): Promise<void>;
  /** A program's OSC 52 write, already allowed by the settings and focus. */
  programCopy(text: string): void;
  takeControl(view: TerminalView): void;
  /** Presence and control requests (terminal/presence.ts). */
  readonly control?: Control;
  commandLink(view: TerminalView, commandId: string): string;
  /** Keys the workbench handles itself (xterm must ignore them). */
  isWorkbenchKey(e: KeyboardEvent): boolean;
  /** The info bar's Replay of an exited terminal with a recording (player.ts); undefined: none. */
  replayAction?(view: TerminalView): (() => void) | undefined;
  /** The claim bar's Hand Back to Agent (agentMark.ts); undefined: none. */
  handBackAction?(view: TerminalView): { name: string; run: () => void } | undefined;
  /** Typed input with the on-screen key row's sticky Ctrl/Alt applied (keyRow.ts). */
  typedInput(data: string): string;
  /** What the approval bar shows (approvals.ts); undefined: nothing. */
  approvalBarOf?(view: TerminalView): Omit<ApprovalBarInput, 'secret'> | undefined;
  /** A program of the agent's on this terminal waits for a password (approvals.ts agentSecretPrompt). */
  secretPromptUp?(view: TerminalView): boolean;
  /** Sends a person's answer to an approval. */
  answerApproval?(id: string, decision: 'approve' | 'deny', reason?: string, alwaysAllow?: boolean): void;
}

export class TerminalView {
  readonly uri: string;
  readonly id: string;
  readonly element: HTMLElement;
  readonly term: Terminal;
  state: TerminalState | undefined;
  readonly tracker = new CommandTracker();
  renderer: 'webgl' | 'dom' = 'dom';
  /** The renderer and why, for the status bar: "DOM — software GPU detected". */
  rendererLabel = 'DOM — not shown yet';
  /** Set once the first snapshot is on screen. */
  loaded = false;
  /**
   * A client renamed the terminal (a titleChanged with an origin; the server's
   * program titles have none), so its title beats the automatic name. Not
   * known from a snapshot: the state does not say whether its title is pinned.
   */
  titlePinned = false;

  #host: ViewHost;
  #fit = new FitAddon();
  #search = new SearchAddon({ highlightLimit: 2000 });
  #webgl: WebglRenderer | undefined;
  /** The renderer setting the renderer was chosen with. */
  #rendererSetting: TerminalSettings['renderer'] | undefined;
  #queue: WriteQueue;
  #decorations: DecorationAddon;
  #skips: SkipMarks;
  #navigation: MarkNavigation;
  #sizing: TerminalSizing;
  #claimBar: ClaimBar;
  #approvalBar: ApprovalBar;
  #find: FindWidget;
  #visible = false;
  #opened = false;
  #pendingDeepLink: string | undefined;
  #gate: InputGate;
  #disposables: IDisposable[] = [];
  #unsubscribe: (() => void)[] = [];

  constructor(uri: string, host: ViewHost) {
    this.uri = uri;
    this.id = terminalIdOf(uri);
    this.#host = host;
    this.term = createXterm(host.themes, terminalSettings());
    this.#queue = new WriteQueue({ write: (d, cb) => this.term.write(d, cb) });
    this.#gate = new InputGate(this.term, this.#queue, () => this.canType, (data) => inputParts(data).forEach((part) => host.client.dispatch(this.uri, { type: 'terminal/input', data: part })));
    const hover = new CommandHover({
      copyOutput: (rec) => void this.copyCommandOutput(rec.commandId),
      copyCommand: (rec) => void host.copyText(rec.commandLine),
      copyLink: linksWorkForOthers(host.role) ? (rec) => void host.copyText(host.commandLink(this, rec.commandId)) : undefined,
    });
    this.#decorations = new DecorationAddon(host.themes, hover);
    this.#skips = new SkipMarks(this.term, this.#queue, { color: () => host.themes.colors.warning, show: (text) => host.notify('info', text) });
    this.#navigation = new MarkNavigation(this.term);
    this.#claimBar = new ClaimBar(() => host.takeControl(this));
    this.#approvalBar = new ApprovalBar({
      answer: (id, decision, reason, always) => {
        host.answerApproval?.(id, decision, reason, always);
        // Answered: the keyboard goes back to the terminal.
        this.focus();
      },
      focusTerminal: () => this.focus(),
    });
    this.#find = new FindWidget(this.#search, host.themes, () => this.term.focus());
    this.#sizing = new TerminalSizing(this.term, this.#fit, {
      state: () => this.state,
      isHolder: () => this.isHolder,
      mayResize: () => host.online(this.uri) && host.role !== 'viewer' && !this.exited,
      sizePolicy: () => host.client.serverMeta?.[extMeta.sizePolicy] as SizePolicy | undefined,
      dispatchResize: (cols, rows) => {
        // Under 'smallest' every view reports its size (sizing.ts); else only the holder sizes.
        if (host.client.serverMeta?.[extMeta.sizePolicy] !== 'smallest' && (!this.isHolder || this.term.cols !== cols || this.term.rows !== rows)) return false;
        return host.client.dispatch(this.uri, { type: 'terminal/resized', cols, rows }) !== undefined;
      },
    });
    this.element = h(
      'div.terminal-view',
      { 'data-terminal': this.id, tabindex: -1 },
      this.#claimBar.infobar,
      // A command line waiting for a person's approval, a password prompt: above the terminal, never over its text.
      this.#approvalBar.element,
      // Above the terminal, never over its text (the holder's control requests float).
      this.#claimBar.claimbar,
      h('div.terminal-body', null, this.#sizing.scaleBox, this.#find.element, this.#starting),
    );
    this.#sizing.observe(this.element, () => this.scheduleLayout());
    this.#focusOnTap();
    this.#unsubscribe.push(
      host.themes.onChange(() => this.#applyTheme()),
      onTerminalSettingsChange((s) => this.#applySettings(s)),
    );
  }

  /** A tap anywhere in the terminal's area (also below its rows) gives it the keyboard. */
  #focusOnTap(): void {
    this.element.querySelector('.terminal-body')!.addEventListener('click', (e) => {
      // Not from the replay over it: its keyboard stays in the player (Escape closes it).
      if ((e.target as Element).closest('button, input, textarea, a, .find-widget, .terminal-claimbar, .terminal-approvalbar, .replay-panel')) return;
      if (!this.term.hasSelection()) this.term.focus();
    });
  }

  /** The commands shell integration reported, in order. */
  /** The command line of the command running now (for the terminal's name). */
  get runningCommand(): string | undefined {
    const last = this.tracker.last;
    return last && !last.isComplete ? last.commandLine : undefined;
  }

  get commands(): readonly CommandRecord[] {
    return this.tracker.records;
  }

  // ---- lifecycle ----

  /** Attach xterm to the DOM (first time the view is shown). */
  #open(): void {
    if (this.#opened) return;
    this.#opened = true;
    const host = this.#host;
    const gate = this.#gate;
    this.#disposables.push(
      ...openXterm(this.term, this.#sizing.xtermBox, [this.#fit, this.#search, this.#decorations], {
        mayAnswer: () => gate.mayAnswer(),
        focusReportSuppressed: () => gate.focusReportSuppressed(),
        mayWriteClipboard: () => gate.mayWriteClipboard(),
        programCopy: (text) => host.programCopy(text),
        input: (data) => gate.input(host.typedInput(data)),
        focused: () => host.focused(this),
        pasteMultiline: (text) => void this.paste(text),
        pasteClipboard: () => void pasteClipboard(this, host.notify),
        isWorkbenchKey: (e) => host.isWorkbenchKey(e),
        linkClickedPlain: () => showLinkHint(host),
        hyperlinkClicked: (target) => confirmHyperlink(target, (text) => void host.copyText(text)),
        fileLinkClicked: (path) => showFilePath(path, (text) => void host.copyText(text)),
      }),
    );
    this.#loadWebgl();
  }

  #loadWebgl(): void {
    this.#rendererSetting = terminalSettings().renderer;
    const { webgl, choice } = WebglRenderer.attach(this.term, this.#rendererSetting, () => {
      // xterm has fallen back to the DOM renderer and redraws by itself.
      this.#webgl = undefined;
      this.renderer = 'dom';
      this.rendererLabel = rendererLabel({ renderer: 'dom', why: 'the WebGL context was lost' });
      this.#host.changed(this, 'status');
    });
    this.#webgl = webgl;
    this.renderer = choice.renderer;
    this.rendererLabel = rendererLabel(choice);
  }

  /** Settings changed (here or in another tab): apply them live and refit, the cell size may differ. */
  #applySettings(s: TerminalSettings): void {
    applyXtermSettings(this.term, s);
    if (this.#opened && s.renderer !== this.#rendererSetting) {
      this.#webgl?.dispose();
      this.#webgl = undefined;
      this.#loadWebgl();
    }
    this.scheduleLayout();
    this.#host.changed(this, 'status');
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
    this.#sizing.dispose();
    this.#decorations.dispose();
    this.#skips.dispose();
    for (const d of this.#disposables) d.dispose();
    for (const u of this.#unsubscribe) u();
    this.#webgl?.dispose();
    this.#webgl = undefined;
    this.term.dispose();
    this.element.remove();
  }

  // ---- roles and input ----

  get isHolder(): boolean {
    const c = this.state?.claim;
    return c?.kind === 'client' && c.clientId === this.#host.client.clientIdOf(this.uri);
  }

  get exited(): boolean {
    return !!this.state && hasExited(this.state);
  }

  /**
   * Whether this page may type into and size the terminal now (the server
   * enforces it, docs/protocol.md "Control"): it holds the claim; or nobody
   * here holds it (the first to type gets control); or, for the owner, an
   * agent session holds it.
   */
  get hasControl(): boolean {
    return mayDrive(this.state?.claim, this.#host.client.clientIdOf(this.uri), this.#host.role, this.#host.control?.members(this.uri), this.#host.secretPromptUp?.(this));
  }

  get canType(): boolean {
    return this.#host.online(this.uri) && this.#host.role !== 'viewer' && !this.exited && this.loaded && this.hasControl;
  }

  /** Re-evaluate input gating (connection state or role changed). */
  updateInput(): void {
    if (!this.#opened) return;
    this.term.options.disableStdin = !this.canType;
    this.#renderClaimBar();
  }

  async paste(text: string): Promise<void> {
    if (!this.canType) return;
    const body = text.replace(/\r?\n$/, '');
    if (/\r?\n/.test(body) && !(await this.#host.confirmPaste(text))) return;
    this.term.paste(text);
    this.term.focus();
  }

  // ---- protocol input ----

  /**
   * "Shell starting…" over a running terminal that has printed nothing yet
   * (a slow rc file: pyenv init, a network mount), gone at its first output:
   * never a blank pane with no word of what happens.
   */
  #starting = h('div.terminal-starting', { hidden: true, role: 'status' }, 'Shell starting…');

  #showStarting(on: boolean): void {
    if (this.#starting.hidden === !on) return;
    this.#starting.hidden = !on;
  }

  /**
   * Redraw from a snapshot: clear, resize to the pty, write the content.
   * `commandMeta` gives a command's terminal/commandExecuted _meta (who ran
   * it), kept beside the state (AhpClient.commandMeta).
   */
  onSnapshot(state: TerminalState, commandMeta?: (commandId: string) => Record<string, unknown> | undefined): void {
    const first = !this.loaded;
    this.#showStarting(!hasExited(state) && state.content.length === 0);
    this.state = state;
    this.loaded = true;
    this.#queue.discardQueued();
    const { cols, rows } = state;
    const before = this.tracker.records;
    this.#queue.then(() => {
      this.#decorations.clear(before);
      this.#skips.clear();
      this.term.reset();
      if (cols && rows && (cols !== this.term.cols || rows !== this.term.rows)) this.term.resize(cols, rows);
    });
    this.tracker.clear();
    for (const p of state.content) {
      // All of it is history: write it as replay (no answers to its questions).
      if (p.type === 'unclassified') {
        this.#queue.write(p.value, true);
      } else {
        const rec = this.tracker.fromPart(p, commandMeta?.(p.commandId));
        this.#queue.then(() => this.#placeMarker(rec));
        this.#queue.write(p.output, true);
        if (p.isComplete) this.#queue.then(() => this.#decorations.finished(rec));
      }
    }
    this.#queue.then(() => {
      this.#sizing.forgetSentSize();
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

  /** `replayed`: history from a reconnect replay (see MultiHostClient's action event). */
  onAction(env: ActionEnvelope, state: TerminalState, replayed = false): void {
    const prev = this.state;
    this.state = state;
    const a = env.action;
    if (hasExited(state)) this.#showStarting(false);
    if (!isTerminalAction(a)) return this.#otherChange(prev, state);
    switch (a.type) {
      case 'terminal/data':
        if (!this.#starting.hidden) this.#showStarting(false);
        // Into the write queue; a skip's redraw (onSkipped) gets its mark.
        this.#skips.write(env.serverSeq, a.data, replayed);
        return; // hot path: no re-render of the chrome
      case 'terminal/commandExecuted': {
        const rec = this.tracker.executed(a);
        this.#queue.then(() => this.#placeMarker(rec));
        this.#changed('commands', 'status');
        return;
      }
      case 'terminal/commandFinished': {
        const rec = this.tracker.finished(a);
        if (!rec) return;
        this.#queue.then(() => this.#decorations.finished(rec));
        this.#changed('commands', 'status');
        this.#host.commandFinished(this, rec);
        return;
      }
      case 'terminal/cleared': {
        const before = this.tracker.records;
        this.#queue.then(() => {
          this.#decorations.clear(before);
          this.#skips.clear();
          this.term.clear();
        });
        this.tracker.clear();
        this.#changed('commands', 'status');
        return;
      }
      case 'terminal/resized':
        this.scheduleLayout();
        this.#host.changed(this, 'size');
        return;
      case 'terminal/claimed':
        this.#sizing.forgetSentSize();
        this.scheduleLayout();
        this.updateInput(); // only the holder types
        this.#host.changed(this, 'state');
        return;
      case 'terminal/titleChanged':
        this.titlePinned = env.origin !== undefined && a.title !== '';
        this.#host.changed(this, 'state');
        return;
      case 'terminal/exited':
        this.updateInput();
        this.#changed('status', 'state');
        return;
      default:
        this.#otherChange(prev, state);
    }
  }

  /** The server skipped output this connection fell behind on (x-termhost/skipped): its redraw follows. */
  onSkipped(n: SkipNotice): void {
    this.#skips.expect(n);
  }

  #otherChange(prev: TerminalState | undefined, state: TerminalState): void {
    if (prev?.title !== state.title || prev?.cwd !== state.cwd) this.#host.changed(this, 'state');
  }

  #changed(...what: ('state' | 'commands' | 'size' | 'status')[]): void {
    for (const w of what) this.#host.changed(this, w);
  }

  // ---- commands ----

  #placeMarker(rec: CommandRecord): void {
    this.#open();
    this.#decorations.placeMarker(rec);
  }

  /** Plain-text output of a command (from the terminal state). */
  commandOutput(commandId: string): string | undefined {
    const p = this.state?.content.find((x) => x.type === 'command' && x.commandId === commandId);
    return p?.type === 'command' ? stripAnsi(p.output) : undefined;
  }

  async copyCommandOutput(commandId?: string): Promise<void> {
    const id = commandId ?? this.tracker.lastWithOutput()?.commandId;
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

  /** Scroll to a command and highlight it; false if unknown or its output was cleared (a notice says so). */
  revealCommand(commandId: string): boolean {
    if (!this.loaded) {
      this.#pendingDeepLink = commandId;
      return true;
    }
    const rec = this.tracker.find(commandId);
    if (!rec) return false;
    if (!rec.marker) {
      // Its mark is placed once the output before it is parsed.
      this.#pendingDeepLink = commandId;
      this.#queue.then(() => {
        if (this.#pendingDeepLink === commandId) {
          this.#pendingDeepLink = undefined;
          this.revealCommand(commandId);
        }
      });
      return true;
    }
    if (this.#navigation.reveal(rec.marker)) return true;
    // Its mark went with the output: `clear`, or trimmed from the scrollback.
    const what = commandLabel(rec.commandLine, 60);
    this.#host.notify('info', what ? `The output of \`${what}\` was cleared.` : 'The output of that command was cleared.');
    return false;
  }

  /** Ctrl/Cmd+Up/Down: previous / next command relative to the viewport. */
  jumpCommand(dir: -1 | 1): void {
    this.#navigation.jump(dir, this.tracker.records.map((c) => c.marker));
  }

  openFind(): void {
    this.#find.open(this.term.getSelection());
  }

  // ---- layout and sizing ----

  scheduleLayout(): void {
    this.#sizing.schedule(() => this.layout());
  }

  layout(): void {
    if (!this.#visible || !this.#opened || !this.element.isConnected) return;
    const body = this.element.querySelector('.terminal-body') as HTMLElement;
    if (!this.#sizing.layout(body)) return;
    this.#renderClaimBar();
    this.#host.changed(this, 'size');
  }

  /** Proposed size for this pane (for createTerminal). */
  proposeSize(): { cols: number; rows: number } | undefined {
    this.#open();
    return this.#sizing.propose();
  }

  #renderClaimBar(): void {
    this.#renderApprovalBar();
    this.#claimBar.render({ state: this.state, isHolder: this.isHolder, hasControl: this.hasControl, scaled: this.#sizing.scaled, oversize: this.#sizing.oversize, clientId: this.#host.client.clientIdOf(this.uri), role: this.#host.role, uri: this.uri, control: this.#host.control, replay: this.#host.replayAction?.(this), handBack: this.#host.handBackAction?.(this) });
  }

  #renderApprovalBar(): void {
    const x = this.#host.approvalBarOf?.(this);
    const secret = !this.exited && !!this.#host.secretPromptUp?.(this);
    this.#approvalBar.render({ title: x?.title ?? '', pending: x?.pending ?? [], answered: x?.answered ?? [], mayAnswer: x?.mayAnswer ?? false, answering: x?.answering ?? (() => false), secret: secret ? { mayType: this.hasControl } : undefined });
  }

  /** Puts the keyboard on the approval bar's first button; false when it has none. */
  focusApproval(): boolean {
    if (!this.#approvalBar.shown) return false;
    return this.#approvalBar.focus();
  }

  /** Presence or a control request changed: redraw the claim bar (and who may type). */
  renderClaim(): void {
    if (this.#opened) this.term.options.disableStdin = !this.canType;
    this.#renderClaimBar();
  }

  #applyTheme(): void {
    const themes = this.#host.themes;
    this.term.options.theme = themes.xterm;
    this.term.options.minimumContrastRatio = minimumContrast(themes);
    this.#decorations.redecorate(this.tracker.records);
    this.#skips.redecorate();
    this.#find.applyTheme();
  }

  // ---- status for tabs, title, favicon; test hook ----

  /** Build status of this terminal: the exit, else the last command. */
  get status(): TerminalStatus {
    return terminalStatus(this.state, this.tracker.last);
  }

  get writeBacklog(): number {
    return this.#queue.inflight + this.#queue.queued;
  }

  /** Resolves once everything received so far is parsed. */
  drained(): Promise<void> {
    return new Promise((r) => this.#queue.then(r));
  }
}

let linkHintShown = false;
/** Once per page: links open with Ctrl/Cmd+click only. */
function showLinkHint(host: ViewHost): void {
  if (linkHintShown) return;
  linkHintShown = true;
  host.notify('info', `Hold ${/Mac/.test(navigator.platform) ? 'Cmd' : 'Ctrl'} and click to follow a link.`);
}
