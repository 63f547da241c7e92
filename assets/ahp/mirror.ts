// Write-ahead reconciliation for one channel, as AHP's clients do it.
//
// The mirror keeps the server-confirmed state plus the client's pending
// actions. The view state is confirmed + pending *reconcilable* actions, so
// e.g. a rename shows at once. `terminal/input` is a side-effect-only action:
// it is queued (so its echo can be matched) but never predicted; pty output
// only ever comes from the server.
//
// A terminal's content lives in a ContentStore bounded by the server's
// scrollback budget: output is appended in place, so a frame costs
// O(len(data)) however much content and how many commands are kept.
// `confirmed` is still a new object per action, but its `content` array is
// the store's own and changes in place (copy it to keep a picture of it).

import { ContentStore, DEFAULT_CONTENT_BUDGET } from './content';
import { extMeta, type CommandMeta } from './ext';
import { reduceChannel } from './reducers';
import { isTerminalAction, isTerminalChannel, type ActionEnvelope, type StateAction, type TerminalState, type WireAction } from './types';

export interface PendingAction {
  clientSeq: number;
  action: StateAction;
}

/** Actions a client may dispatch whose effect it can predict locally. */
export function isReconcilable(action: WireAction): boolean {
  switch (action.type) {
    case 'terminal/resized':
    case 'terminal/claimed':
    case 'terminal/titleChanged':
    case 'terminal/cleared':
    case 'root/configChanged':
      return true;
    default:
      return false;
  }
}

export type EnvelopeOutcome =
  | { kind: 'stale' } // seq at or below what this mirror already has
  | { kind: 'applied'; own: boolean } // state advanced (own echo or foreign action)
  | { kind: 'rejected'; pending?: PendingAction; reason: string };

export class ChannelMirror<S = unknown> {
  readonly channel: string;
  /** Highest serverSeq reflected in `confirmed` (the snapshot's fromSeq at first). */
  seq: number;
  confirmed: S;
  pending: PendingAction[] = [];
  /** Bytes of UTF-8 content a terminal mirror keeps at most (0 or less: all). */
  readonly contentBudget: number;
  #view: S | undefined;
  /** A terminal channel's content (undefined for other channels). */
  #content: ContentStore | undefined;
  readonly #terminal: boolean;

  constructor(channel: string, snapshotState: S, fromSeq: number, contentBudget = DEFAULT_CONTENT_BUDGET) {
    this.channel = channel;
    this.contentBudget = contentBudget;
    this.#terminal = isTerminalChannel(channel);
    this.confirmed = this.#install(snapshotState);
    this.seq = fromSeq;
  }

  /** Bytes of UTF-8 content held (0 for channels without content). */
  get contentSize(): number {
    return this.#content?.size ?? 0;
  }

  /** Confirmed state with pending reconcilable actions applied on top. */
  get view(): S {
    if (this.#view === undefined) {
      let s = this.confirmed;
      for (const p of this.pending) if (isReconcilable(p.action)) s = reduceChannel(this.channel, s, p.action) as S;
      this.#view = s;
    }
    return this.#view;
  }

  /** Replace everything from a snapshot (subscribe, reconnect, re-initialize). */
  reset(state: S, fromSeq: number, snapshotMeta?: Record<string, unknown>): void {
    this.confirmed = this.#install(state);
    this.setSnapshotMeta(snapshotMeta);
    this.seq = fromSeq;
    this.pending = [];
    this.#view = undefined;
  }

  /**
   * Takes what a snapshot's own _meta says about its state: for a terminal,
   * the _meta of its commands' terminal/commandExecuted (extMeta.commandMeta),
   * which the state has no place for.
   */
  setSnapshotMeta(snapshotMeta: Record<string, unknown> | undefined): void {
    this.#content?.setCommandMeta(snapshotMeta?.[extMeta.commandMeta] as CommandMeta | undefined);
  }

  /** The _meta of a kept command's terminal/commandExecuted (from the action, or from the snapshot for an older one). */
  commandMeta(commandId: string): Record<string, unknown> | undefined {
    return this.#content?.commandMeta(commandId);
  }

  addPending(p: PendingAction): void {
    this.pending.push(p);
    if (isReconcilable(p.action)) this.#view = undefined;
  }

  clearPending(): void {
    this.pending = [];
    this.#view = undefined;
  }

  /**
   * Apply an envelope addressed to this channel. `clientId` identifies us, so
   * our own echoes pop the pending queue.
   */
  receive(env: ActionEnvelope, clientId: string): EnvelopeOutcome {
    const own = env.origin?.clientId === clientId;
    if (env.rejectionReason !== undefined) {
      // Rejections never change state and are not part of the channel's
      // sequence; drop the matching pending action.
      let dropped: PendingAction | undefined;
      if (own) {
        const i = this.pending.findIndex((p) => p.clientSeq === env.origin!.clientSeq);
        if (i >= 0) {
          dropped = this.pending[i];
          this.pending.splice(i, 1);
          this.#view = undefined;
        }
      }
      return dropped ? { kind: 'rejected', pending: dropped, reason: env.rejectionReason } : { kind: 'rejected', reason: env.rejectionReason };
    }
    if (env.serverSeq <= this.seq) return { kind: 'stale' };
    this.seq = env.serverSeq;
    this.confirmed = this.#reduce(env.action);
    if (own) {
      // Pop the echoed action; anything queued before it that never came back
      // was lost (e.g. across a reconnect) and is dropped too.
      const seq = env.origin!.clientSeq;
      const i = this.pending.findIndex((p) => p.clientSeq === seq);
      if (i >= 0) this.pending.splice(0, i + 1);
    }
    this.#view = undefined;
    return { kind: 'applied', own };
  }

  /** A snapshot's state, with a terminal's content moved into a new store (the snapshot is not modified). */
  #install(state: S): S {
    const content = (state as Partial<TerminalState> | undefined)?.content;
    if (!this.#terminal || !Array.isArray(content)) {
      this.#content = undefined;
      return state;
    }
    this.#content = new ContentStore(content, this.contentBudget);
    return { ...state, content: this.#content.parts };
  }

  /** The confirmed state after a server action: content actions go to the store, in place. */
  #reduce(action: WireAction): S {
    const store = this.#content;
    if (!store || !isTerminalAction(action)) return reduceChannel(this.channel, this.confirmed, action) as S;
    const st = this.confirmed as TerminalState;
    switch (action.type) {
      case 'terminal/data':
        store.appendData(action.data);
        return { ...st, content: store.parts } as S;
      case 'terminal/commandExecuted':
        store.commandExecuted(action);
        return { ...st, content: store.parts, supportsCommandDetection: true } as S;
      case 'terminal/commandFinished':
        if (!store.commandFinished(action.commandId, action.exitCode, action.durationMs)) return this.confirmed;
        return { ...st, content: store.parts } as S;
      case 'terminal/cleared':
        store.clear();
        return { ...st, content: store.parts } as S;
      default:
        return reduceChannel(this.channel, this.confirmed, action) as S;
    }
  }
}
