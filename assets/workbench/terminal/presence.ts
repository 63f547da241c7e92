// Who is on a terminal and who controls it (docs/protocol.md, "Presence and
// control" and "Handing over control"): the presence list the server sends
// a terminal's subscribers (x-termhost/presence), labels for people, avatars
// for the tab strip, and control requests (ask the holder; the holder grants
// or declines; the server grants by itself when the holder is away).

import type { MultiHostClient } from '../../ahp/multihost';
import { extMeta, extMethods, extNotifications, type AnswerControlParams, type ControlNotice, type ControlResult, type Member, type RequestControlParams } from '../../ahp/ext';
import { ROOT_CHANNEL, type TerminalClaim } from '../../ahp/types';
import { h } from '../dom';
import { cleanLabel } from '../label';
import type { Role } from '../access';
import type { Notify } from '../quickinput';

export type { ControlNotice, Member };

/** The presence list of an x-termhost/presence notification's params (empty when malformed). */
export function membersOf(params: { members?: unknown } | undefined): Member[] {
  const list = params?.members;
  if (!Array.isArray(list)) return [];
  return list.filter((m): m is Member => !!m && typeof m === 'object' && typeof (m as Member).id === 'string' && typeof (m as Member).name === 'string');
}

/** The viewers a crowd's presence counts instead of naming them (0 when it names everyone or is malformed). */
export function viewersOf(params: { viewers?: unknown } | undefined): number {
  const n = params?.viewers;
  return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : 0;
}

/**
 * A member for people, as seen from this page: the owner's own tabs are
 * "You (this tab)" / "You (Firefox on Linux)"; others by their label. A
 * person signed in by SSO (selfPerson) is "You" on all their tabs, and the
 * owner token's other clients are not them: "Owner (Firefox on Linux)",
 * "bob@build1 (CLI)".
 */
export function memberLabel(member: Member, role: Role, selfId: string | undefined, selfPerson = false): string {
  const m = { ...member, name: cleanLabel(member.name), device: member.device === undefined ? undefined : cleanLabel(member.device) };
  if (m.id === selfId) return m.person ? 'You' : 'You (this tab)';
  // Another person signed in by SSO is never "You", whatever their role.
  if (m.person) return m.kind === 'viewer' ? `${m.name} (viewer)` : m.name;
  const mine = role === 'owner' && !selfPerson && (m.kind === 'owner' || m.kind === 'cli');
  if (m.kind === 'cli') return mine ? `You (${m.name}, CLI)` : `${m.name} (CLI)`;
  if (mine) return `You (${m.device || 'another tab'})`;
  if (m.kind === 'owner') return m.device ? `${m.name} (${m.device})` : m.name;
  return m.kind === 'viewer' ? `${m.name} (viewer)` : m.name;
}

/**
 * Whether a client may type into and size a terminal now, as the server
 * decides (docs/protocol.md, "Control"): the claim holder does; while the
 * holder is here nobody else does, the owner included (it takes control
 * first); a terminal nobody here holds is anyone's who may act (the first
 * keystroke takes control); an agent session's terminal is the agent's
 * until a person takes control (the owner's Take Control), so that a
 * person's keys never mix into an agent's command unannounced — except
 * the owner's answer to a password prompt of the agent's (`secretPrompt`).
 * Without presence the page cannot tell, and lets the server decide.
 */
export function mayDrive(claim: TerminalClaim | undefined, clientId: string, role: Role | string, members: readonly Member[] | undefined, secretPrompt = false): boolean {
  if (role === 'viewer') return false;
  if (!claim) return true;
  if (claim.kind === 'client') return claim.clientId === clientId || !(members ?? []).some((m) => m.control);
  // A program of the agent's waits for a password (the server refuses the
  // agent's input meanwhile): the owner types it without taking control,
  // so the agent's tool call goes on once it is in.
  return secretPrompt && role === 'owner';
}

/**
 * Who holds a session claim, for people: the agent connected to the
 * terminal through termhost mcp ("Agent · Claude Code"), and whether one of
 * its tool calls runs there now.
 */
export function agentHolderLabel(members: Member[], claim: TerminalClaim): string {
  const agent = members.find((m) => m.kind === 'agent');
  const who = agent ? agent.name : 'an agent session';
  return claim.kind === 'session' && claim.toolCallId ? `${who}, running a tool call` : who;
}

/** One or two initials of a label: "alice" → "A", "You (this tab)" → "Y", "bob@build1" → "B". */
export function initials(name: string): string {
  const words = name.replace(/\(.*\)/g, '').split(/[\s@._-]+/).filter(Boolean);
  const letters = words.slice(0, 2).map((w) => [...w][0]!.toUpperCase());
  return letters.join('') || '?';
}

/** Presence and control requests of every terminal, for the workbench. */
export class Control {
  #client: MultiHostClient;
  #role: Role;
  #notify: Notify;
  #dismiss: (key: string) => void;
  #changed: (uri: string) => void;
  #titleOf: (uri: string) => string;
  /** Requests waiting for our answer (we hold the claim), by terminal. */
  #incoming = new Map<string, ControlNotice[]>();
  /** Our own pending request, by terminal. */
  #outgoing = new Map<string, ControlNotice>();
  /** The last presence list of each terminal we subscribe to. */
  #presence = new Map<string, Member[]>();
  /** The viewers each one counts without naming them (a crowd). */
  #viewers = new Map<string, number>();
  /** This page is a person signed in by SSO. */
  #person: boolean;

  constructor(client: MultiHostClient, role: Role, notify: Notify, dismiss: (key: string) => void, changed: (uri: string) => void, titleOf: (uri: string) => string, person = false) {
    this.#person = person;
    this.#client = client;
    this.#role = role;
    this.#notify = notify;
    this.#dismiss = dismiss;
    this.#changed = changed;
    this.#titleOf = titleOf;
    client.on('notification', (method, params) => {
      if (method === extNotifications.controlRequest) this.#onNotice(params as ControlNotice);
      if (method === extNotifications.presence) this.#onPresence(params as { channel?: unknown; members?: unknown; viewers?: unknown });
    });
  }

  /** Our own presence id (from the initialize result). */
  get selfId(): string | undefined {
    const id = this.#client.serverMeta?.[extMeta.presenceId];
    return typeof id === 'string' ? id : undefined;
  }

  /** Our presence id on the host of a terminal (each host gives its own). */
  #selfIdOf(uri: string | undefined): string | undefined {
    if (uri === undefined) return this.selfId;
    const id = this.#client.serverMetaOf(uri)?.[extMeta.presenceId];
    return typeof id === 'string' ? id : undefined;
  }

  /** Who is on a terminal: known only while we subscribe to it (the server sends presence to a terminal's subscribers). */
  members(uri: string): Member[] {
    if (!this.#client.isSubscribed(uri)) {
      this.#presence.delete(uri);
      return [];
    }
    return this.#presence.get(uri) ?? [];
  }

  /** How many viewers a crowd's presence counts on a terminal, beside members (0 while it names everyone). */
  viewers(uri: string): number {
    return this.#client.isSubscribed(uri) ? (this.#viewers.get(uri) ?? 0) : 0;
  }

  #onPresence(p: { channel?: unknown; members?: unknown; viewers?: unknown }): void {
    if (typeof p?.channel !== 'string') return;
    this.#presence.set(p.channel, membersOf(p));
    this.#viewers.set(p.channel, viewersOf(p));
    this.#changed(p.channel);
  }

  /** A member's label; `uri`: of that terminal's presence (its host's ids). */
  label(m: Member, uri?: string): string {
    return memberLabel(m, this.#role, this.#selfIdOf(uri), this.#person);
  }

  /**
   * Who controls a terminal, for people: never a client that left. Of a
   * terminal we do not subscribe to (no presence), `away` is the
   * catalogue's word that its holder left for good (extMeta.holderAway).
   */
  holderLabel(uri: string, claim: TerminalClaim | undefined, away = false): string {
    if (claim?.kind === 'session') return agentHolderLabel(this.members(uri), claim);
    if (claim?.kind === 'client' && claim.clientId === this.#client.clientIdOf(uri)) return 'you';
    if (!this.#client.isSubscribed(uri)) return claim?.kind === 'client' && !away ? 'someone else' : 'nobody';
    const holder = this.members(uri).find((m) => m.control);
    return holder ? this.label(holder, uri) : 'nobody';
  }

  incoming(uri: string): ControlNotice[] {
    return this.#incoming.get(uri) ?? [];
  }

  outgoing(uri: string): ControlNotice | undefined {
    return this.#outgoing.get(uri);
  }

  /** Ask the holder for control (granted at once when nobody here holds it). */
  async request(uri: string): Promise<void> {
    try {
      const r = (await this.#client.request(extMethods.requestControl, { channel: ROOT_CHANNEL, terminal: uri } satisfies RequestControlParams)) as ControlResult;
      if (r.status === 'pending' && r.requestId && !this.#outgoing.has(uri)) {
        this.#outgoing.set(uri, { terminal: uri, requestId: r.requestId, status: 'pending', from: { id: this.#selfIdOf(uri) ?? '', name: 'you', kind: 'driver' }, autoGrantMs: r.autoGrantMs });
        this.#changed(uri);
      }
    } catch (e) {
      this.#notify('warning', `Could not request control: ${(e as Error).message}`);
    }
  }

  answer(uri: string, requestId: string, grant: boolean): void {
    this.#drop(this.#incoming, uri, requestId);
    this.#changed(uri);
    this.#client.request(extMethods.answerControl, { channel: ROOT_CHANNEL, terminal: uri, requestId, grant } satisfies AnswerControlParams).catch(() => {
      // Answered already (another tab of ours, the toast and the bar, or the request ended).
    });
  }

  #onNotice(n: ControlNotice): void {
    if (!n || typeof n.terminal !== 'string' || !n.from) return;
    const mine = n.from.id === this.#selfIdOf(n.terminal);
    if (mine) this.#onOwnRequest(n);
    else this.#onRequestToUs(n);
    this.#changed(n.terminal);
  }

  #onOwnRequest(n: ControlNotice): void {
    if (n.status === 'pending') {
      this.#outgoing.set(n.terminal, n);
      return;
    }
    this.#outgoing.delete(n.terminal);
    const title = this.#titleOf(n.terminal);
    if (n.status === 'declined') this.#notify('warning', `Your request for control of “${title}” was declined.`);
    if (n.status === 'granted') this.#notify('info', n.auto ? `You have control of “${title}” (its holder was away).` : `You have control of “${title}”.`);
  }

  #onRequestToUs(n: ControlNotice): void {
    if (n.status !== 'pending') {
      this.#drop(this.#incoming, n.terminal, n.requestId);
      return;
    }
    const list = this.#incoming.get(n.terminal) ?? [];
    if (list.some((r) => r.requestId === n.requestId)) return;
    this.#incoming.set(n.terminal, [...list, n]);
    const who = this.label(n.from, n.terminal);
    // One notice, the toast: it stays until answered or the request ends,
    // and covers nothing of the terminal (a bar over it hid its first line).
    this.#notify(
      'info',
      `${who} asks for control of “${this.#titleOf(n.terminal)}”.`,
      [
        { label: 'Grant', run: () => this.answer(n.terminal, n.requestId, true) },
        { label: 'Decline', run: () => this.answer(n.terminal, n.requestId, false) },
      ],
      requestKey(n.requestId),
    );
  }

  #drop(map: Map<string, ControlNotice[]>, uri: string, id: string): void {
    if (map === this.#incoming) this.#dismiss(requestKey(id));
    const rest = (map.get(uri) ?? []).filter((r) => r.requestId !== id);
    if (rest.length) map.set(uri, rest);
    else map.delete(uri);
  }

  /** Requests to a holder we no longer are are moot: forget them. */
  claimMoved(uri: string): void {
    for (const r of this.incoming(uri)) this.#dismiss(requestKey(r.requestId));
    if (this.#incoming.delete(uri)) this.#changed(uri);
  }
}

/** The key of a request's toast. */
function requestKey(requestId: string): string {
  return `control-request:${requestId}`;
}

/** The hover text of a terminal's avatars: the members by label, then the viewers a crowd's presence counts. */
export function presenceLabels(members: Member[], label: (m: Member) => string, viewers = 0): string[] {
  const labels = members.map((m) => (m.control ? `${label(m)} — in control` : label(m)));
  if (viewers > 0) labels.push(viewers === 1 ? '1 viewer' : `${viewers} viewers`);
  return labels;
}

/** Avatars of a terminal's members, at most `max`, with the full list on hover; `viewers` counted in the "+N". */
export function avatars(members: Member[], label: (m: Member) => string, max = 3, viewers = 0): HTMLElement | null {
  if (members.length === 0 && viewers === 0) return null;
  const labels = presenceLabels(members, label, viewers);
  const count = members.length + viewers;
  const el = h('span.presence-avatars', { title: `Connected:\n${labels.join('\n')}`, 'aria-label': `Connected: ${labels.join(', ')}`, 'data-count': String(count) });
  for (const m of members.slice(0, max)) {
    el.append(h('span.presence-avatar', { class: `kind-${m.kind}${m.control ? ' in-control' : ''}`, 'data-member': m.id }, initials(label(m))));
  }
  const shown = Math.min(members.length, max);
  if (count > shown) el.append(h('span.presence-avatar.more', null, `+${count - shown}`));
  return el;
}
