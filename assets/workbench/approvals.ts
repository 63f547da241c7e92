// Approvals (docs/protocol.md, "Approvals"): the list of command lines an
// agent or a driver waits to run until a person approves them, as the server
// sends it (x-termhost/approvals, the whole list on every change), and the
// answers (x-termhost/approval/answer). What a terminal's bar, its tab and
// its side bar row show is decided here; terminal/approvalBar.ts draws it.
// Everything in an approval but its id and state comes from the requester
// (an agent, a driver link): it is shown as text, never as HTML, and control
// and direction characters are shown as escapes, never obeyed.

import { RpcError } from '../ahp/client';
import type { MultiHostClient } from '../ahp/multihost';
import { extMeta, extMethods, extNotifications, type Approval, type ApprovalAnswerParams, type ApprovalState } from '../ahp/ext';
import type { TerminalClaim, TerminalInfo } from '../ahp/types';
import { cleanLabel } from './label';
import { commandLabel } from './terminal/commandTracker';
import type { Notify } from './quickinput';

export type { Approval };

const STATES: readonly ApprovalState[] = ['pending', 'approved', 'denied', 'timed_out', 'withdrawn'];
const str = (v: unknown): v is string => typeof v === 'string';

/** The approvals of an x-termhost/approvals notification's params (or an approval/list result); malformed entries are left out. */
export function approvalsOf(params: unknown): Approval[] {
  const list = (params as { approvals?: unknown } | undefined)?.approvals;
  if (!Array.isArray(list)) return [];
  return list.filter((a): a is Approval => {
    if (!a || typeof a !== 'object') return false;
    const x = a as Partial<Approval>;
    return str(x.id) && str(x.terminal) && str(x.commandLine) && STATES.includes(x.state as ApprovalState) && !!x.requestedBy && typeof x.requestedBy === 'object' && str(x.requestedBy.name);
  });
}

// C0 and C1 controls but tab and newline, and the bidirectional controls.
// eslint-disable-next-line no-control-regex
const unseen = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff]/g;

/**
 * A command line as it is shown for approval: what would run, every
 * character accounted for. Control and direction characters ("rm -rf ~
 * \u202E#etad" reads backwards after the override) are shown as escapes
 * (\x1b, \u202e); a carriage return as \r; newlines stay (a script of
 * several lines shows as several lines).
 */
export function visibleCommand(commandLine: string): string {
  return commandLine.replace(unseen, (c) => {
    const n = c.codePointAt(0)!;
    if (c === '\r') return '\\r';
    return n <= 0xff ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`;
  });
}

/** Who asks, for people: "Agent · Claude Code", "bob (driver)". */
export function requesterLabel(a: Approval): string {
  const name = cleanLabel(a.requestedBy.name) || (a.requestedBy.kind === 'agent' ? 'Agent' : 'someone');
  return a.requestedBy.kind === 'driver' ? `${name} (driver)` : name;
}

/** The requester in a sentence's subject: "Agent" for any agent, else its label. */
function subject(a: Approval): string {
  return a.requestedBy.kind === 'agent' ? 'Agent' : requesterLabel(a);
}

/** The desktop notification's title: "Agent wants to run `make deploy` in build". */
export function notificationTitle(a: Approval, terminalTitle: string): string {
  return `${subject(a)} wants to run \`${commandLabel(visibleCommand(a.commandLine), 80)}\` in ${cleanLabel(terminalTitle) || 'a terminal'}`;
}

/** Why it asks, in one line: "rule rm: removes files". */
export function whyText(a: Approval): string {
  const rule = cleanLabel(a.rule ?? '');
  const reason = cleanLabel(a.reason ?? '');
  if (rule && reason) return `rule ${rule}: ${reason}`;
  return rule ? `rule ${rule}` : reason;
}

/** How an approval ended, for everyone: "Approved by Ann", "Denied by Ann: not on main". */
export function outcomeText(a: Approval): string {
  const by = a.answeredBy?.name ? cleanLabel(a.answeredBy.name) : '';
  switch (a.state) {
    case 'approved':
      return by ? `Approved by ${by}${a.alwaysAllow ? ' (always allowed from now on)' : ''}` : 'Approved';
    case 'denied': {
      const why = a.denyReason ? cleanLabel(a.denyReason) : '';
      return `${by ? `Denied by ${by}` : 'Denied'}${why ? `: ${why}` : ''}`;
    }
    case 'timed_out':
      return 'Nobody answered in time: not run';
    case 'withdrawn':
      return 'Withdrawn: the requester left';
    default:
      return 'Waiting for approval';
  }
}

/**
 * The word(s) "Always allow" adds to the requester's rules (it writes
 * `"<word>": true`), as the requester's policy suggests them
 * (internal/approval): the command's name, with its sub-command for the
 * tools that have them ("git push", "npm run"), so that approving `git
 * push` once does not allow `git reset --hard` for ever. Undefined when the
 * line is not one plain command (a pipe, a list, a substitution, quotes,
 * an assignment): the button would not say what gets allowed, so those
 * are approved one at a time.
 */
export function alwaysAllowWord(commandLine: string): string | undefined {
  const line = commandLine.trim();
  if (!line || /[;&|`$<>(){}\n\r\\'"*?[\]#~=]/.test(line)) return undefined;
  const words = line.split(/\s+/);
  const name = words[0]!.replace(/^.*\//, '');
  if (!name || name.startsWith('-')) return undefined;
  const sub = words[1];
  if (SUBCOMMAND_TOOLS.has(name) && sub && !sub.startsWith('-') && !sub.includes('/')) return `${name} ${sub}`;
  return name;
}

/** The tools whose second word is a sub-command (the requester's policy has the same list). */
const SUBCOMMAND_TOOLS = new Set(['git', 'npm', 'pnpm', 'yarn', 'go', 'cargo', 'docker', 'podman', 'kubectl', 'pip', 'pip3', 'apt', 'apt-get', 'systemctl', 'gh', 'brew', 'make', 'dotnet', 'terraform', 'helm', 'npx', 'uv']);

/**
 * Whether this page answers an approval: the owner any; someone else who
 * holds the terminal's claim (the server lets the holder answer), but never
 * a driver's own Enter — asking the driver who typed it would be no check.
 */
export function mayAnswer(role: string, isHolder: boolean, a: Approval | undefined): boolean {
  if (!a || role === 'viewer') return false;
  return role === 'owner' || (isHolder && a.requestedBy.kind !== 'driver');
}

/** What a tab and a side bar row show while a terminal waits for a person. */
export interface Attention {
  kind: 'approval' | 'secret';
  /** The badge's text ("1", "2", "🔑"). */
  text: string;
  /** Its tooltip and accessible name. */
  title: string;
}

/** The badge of a terminal: its pending approvals first, else its secret prompt. */
export function attentionOf(pending: readonly Approval[], secret: boolean): Attention | undefined {
  if (pending.length > 0) {
    const first = pending[0]!;
    const more = pending.length > 1 ? ` (and ${pending.length - 1} more)` : '';
    return { kind: 'approval', text: String(pending.length), title: `${subject(first)} waits for approval to run \`${commandLabel(visibleCommand(first.commandLine), 60)}\`${more}` };
  }
  if (secret) return { kind: 'secret', text: '', title: 'A program waits for a password: type it in the terminal' };
  return undefined;
}

/**
 * Whether a terminal's secret prompt is one for people here to answer:
 * the catalogue says a program waits for input it does not echo, and an
 * agent session holds the terminal (a person at their own `sudo` needs no
 * bar: they are typing already).
 */
export function agentSecretPrompt(info: TerminalInfo | undefined, claim: TerminalClaim | undefined): boolean {
  return info?._meta?.[extMeta.secretPrompt] === true && (claim ?? info.claim)?.kind === 'session';
}

/** The secret prompt bar's sentence: "Agent needs a password in build — type it in the terminal". */
export function secretPromptText(terminalTitle: string, mayType: boolean): string {
  const t = cleanLabel(terminalTitle) || 'this terminal';
  return mayType ? `Agent needs a password in ${t} — type it in the terminal` : `Agent needs a password in ${t} — the owner types it in the terminal`;
}

/**
 * The approvals list as the server last sent it, and what changed with
 * each new list: the terminals whose bars to redraw, and the approvals seen
 * pending for the first time (to notify once).
 */
export class ApprovalBook {
  #list: Approval[] = [];
  /** Ids of approvals ever seen pending: notified once however often the list comes. */
  #seen = new Set<string>();

  /** Takes a new list: returns the terminals it changes and the approvals newly pending. */
  set(list: readonly Approval[]): { changed: Set<string>; fresh: Approval[]; ended: Approval[] } {
    const before = new Map(this.#list.map((a) => [a.id, a]));
    const changed = new Set<string>();
    const fresh: Approval[] = [];
    const ended: Approval[] = [];
    for (const a of list) {
      const was = before.get(a.id);
      before.delete(a.id);
      if (!was || was.state !== a.state) changed.add(a.terminal);
      if (a.state === 'pending' && !this.#seen.has(a.id)) {
        this.#seen.add(a.id);
        fresh.push(a);
      }
      if (was?.state === 'pending' && a.state !== 'pending') ended.push(a);
    }
    for (const gone of before.values()) {
      changed.add(gone.terminal);
      if (gone.state === 'pending') ended.push(gone);
    }
    this.#list = [...list];
    // Forget ids no longer listed once the list is small again: bounded memory.
    if (this.#seen.size > 1024) this.#seen = new Set(this.#list.map((a) => a.id));
    return { changed, fresh, ended };
  }

  get all(): readonly Approval[] {
    return this.#list;
  }

  get(id: string): Approval | undefined {
    return this.#list.find((a) => a.id === id);
  }

  /** A terminal's approvals waiting for an answer, oldest first. */
  pending(uri: string): Approval[] {
    return this.#list.filter((a) => a.terminal === uri && a.state === 'pending').sort((x, y) => (x.createdAt ?? 0) - (y.createdAt ?? 0));
  }

  /** A terminal's approvals answered lately (the server keeps them a few seconds): who answered, for everyone. */
  answered(uri: string): Approval[] {
    return this.#list.filter((a) => a.terminal === uri && a.state !== 'pending');
  }
}

/** What Approvals needs of the workbench. */
export interface ApprovalsHost {
  readonly client: MultiHostClient;
  readonly role: string;
  notify: Notify;
  dismiss(key: string): void;
  /** A terminal's name in this page. */
  titleOf(uri: string): string;
  /** The approvals of these terminals changed: redraw their bars, tabs and rows. */
  changed(uris: Set<string>): void;
  /** The terminal is on screen in this page (its bar is seen). */
  shown(uri: string): boolean;
  /** Opens the terminal and shows its bar. */
  reveal(uri: string): void;
}

/** The toast's key of an approval (one per approval, gone once answered). */
function toastKey(id: string): string {
  return `approval:${id}`;
}

/** Approvals of every terminal this connection may see, for the workbench. */
export class Approvals {
  readonly book = new ApprovalBook();
  #host: ApprovalsHost;
  /** Answers sent and not yet answered: their buttons wait. */
  #answering = new Set<string>();
  /** Desktop notifications shown, by approval id: closed once answered. */
  #desktop = new Map<string, Notification>();

  constructor(host: ApprovalsHost) {
    this.#host = host;
    host.client.on('notification', (method, params) => {
      if (method === extNotifications.approvals) this.#apply(approvalsOf(params));
    });
    // The server sends the list after a reconnect only when it is not
    // empty: what was listed before the link dropped is not known to hold.
    host.client.on('state', (s) => {
      if (s !== 'online' && this.book.all.length > 0) this.#apply([]);
    });
  }

  pending(uri: string): Approval[] {
    return this.book.pending(uri);
  }

  answered(uri: string): Approval[] {
    return this.book.answered(uri);
  }

  answering(id: string): boolean {
    return this.#answering.has(id);
  }

  #apply(list: Approval[]): void {
    const { changed, fresh, ended } = this.book.set(list);
    for (const a of ended) this.#endNotices(a);
    for (const a of fresh) this.#tell(a);
    for (const id of [...this.#answering]) if (this.book.get(id)?.state !== 'pending') this.#answering.delete(id);
    if (changed.size) this.#host.changed(changed);
  }

  /**
   * A new approval: a desktop notification when this page is not looked at
   * (only with permission granted already: never asked for here), a toast
   * when its terminal is not on screen; the terminal's bar says it anyway.
   */
  #tell(a: Approval): void {
    const host = this.#host;
    const title = notificationTitle(a, host.titleOf(a.terminal));
    const looking = typeof document !== 'undefined' && !document.hidden && document.hasFocus();
    if (!looking && typeof Notification !== 'undefined' && Notification.permission === 'granted') {
      try {
        const n = new Notification(title, { body: whyText(a), tag: `termhost-approval-${a.id}`, requireInteraction: true });
        n.onclick = () => {
          window.focus();
          host.reveal(a.terminal);
          n.close();
        };
        this.#desktop.set(a.id, n);
      } catch {
        /* some browsers only allow notifications from a service worker */
      }
    }
    if (!host.shown(a.terminal)) host.notify('info', `${title}.`, [{ label: 'Show', run: () => host.reveal(a.terminal) }], toastKey(a.id));
  }

  /** A terminal is on screen now: its bar says what its toasts said. */
  shown(uri: string): void {
    for (const a of this.book.pending(uri)) this.#host.dismiss(toastKey(a.id));
  }

  #endNotices(a: Approval): void {
    this.#host.dismiss(toastKey(a.id));
    this.#desktop.get(a.id)?.close();
    this.#desktop.delete(a.id);
  }

  /** Sends a person's answer; the first answer wins, a later one is told who answered first. */
  async answer(id: string, decision: 'approve' | 'deny', reason?: string, alwaysAllow?: boolean): Promise<void> {
    const a = this.book.get(id);
    if (!a || a.state !== 'pending' || this.#answering.has(id)) return;
    this.#answering.add(id);
    this.#host.changed(new Set([a.terminal]));
    const why = reason?.trim();
    try {
      await this.#host.client.request(extMethods.approvalAnswer, { id, decision, ...(why ? { reason: why } : {}), ...(alwaysAllow ? { alwaysAllow: true } : {}) } satisfies ApprovalAnswerParams);
    } catch (e) {
      // Answered by someone else first (-32010 "already approved by Ann"), gone, or offline.
      const msg = cleanLabel((e as Error).message ?? String(e));
      this.#host.notify(e instanceof RpcError && e.code === -32010 ? 'info' : 'warning', `Could not answer: ${msg}.`);
    } finally {
      this.#answering.delete(id);
      this.#host.changed(new Set([a.terminal]));
    }
  }
}
