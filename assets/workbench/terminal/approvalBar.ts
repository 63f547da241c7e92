// The approval bar over a terminal (approvals.ts decides what it says): the
// command line an agent or a driver waits to run, who asks and why, with
// Approve, Deny (a reason may be given) and "Always Allow `word`"; then, for
// a few seconds and for everyone, who answered; and the secret prompt bar
// ("Agent needs a password in build — type it in the terminal"). Every
// string from the requester goes in as text (h() makes text nodes), never
// as HTML. Keyboard: Tab reaches every button, Enter presses it, Enter in
// the reason field denies, Escape leaves the reason field, then the bar
// (back to the terminal).

import { h, svg } from '../dom';
import { icons } from '../icons';
import { alwaysAllowWord, outcomeText, requesterLabel, secretPromptText, visibleCommand, whyText, type Approval, type Attention } from '../approvals';

export interface ApprovalBarInput {
  /** The terminal's name. */
  title: string;
  pending: readonly Approval[];
  answered: readonly Approval[];
  /** This page may answer (the owner, or it holds the terminal's claim). */
  mayAnswer: boolean;
  /** An answer to this approval is on its way. */
  answering: (id: string) => boolean;
  /** A secret prompt waits on an agent's terminal; mayType: this page may type it. */
  secret?: { mayType: boolean };
}

export interface ApprovalBarActions {
  answer(id: string, decision: 'approve' | 'deny', reason?: string, alwaysAllow?: boolean): void;
  focusTerminal(): void;
}

export class ApprovalBar {
  readonly element = h('div.terminal-approvalbar', { hidden: true, role: 'region', 'aria-label': 'Approval', 'aria-live': 'polite' });
  #act: ApprovalBarActions;
  /** The approval whose Deny was pressed: its reason field shows. */
  #denying: string | undefined;
  #draft = '';
  /** What is drawn: redrawn only when it changes (a redraw would lose focus and the reason typed). */
  #drawn = '';
  #last: ApprovalBarInput | undefined;

  constructor(act: ApprovalBarActions) {
    this.#act = act;
    this.element.addEventListener('keydown', (e) => this.#onKey(e));
  }

  get shown(): boolean {
    return !this.element.hidden;
  }

  render(x: ApprovalBarInput): void {
    this.#last = x;
    const first = x.pending[0];
    if (this.#denying && first?.id !== this.#denying) {
      this.#denying = undefined;
      this.#draft = '';
    }
    const key = JSON.stringify([
      x.title,
      x.pending.map((a) => [a.id, a.commandLine, a.requestedBy, a.rule, a.reason, x.answering(a.id)]),
      x.answered.map((a) => [a.id, a.state, a.answeredBy, a.denyReason, a.alwaysAllow, a.commandLine]),
      x.mayAnswer,
      x.secret,
      this.#denying,
    ]);
    if (key === this.#drawn) return;
    this.#drawn = key;
    const focused = document.activeElement instanceof HTMLElement && this.element.contains(document.activeElement) ? document.activeElement.dataset.focus : undefined;
    const parts: HTMLElement[] = [];
    if (first) parts.push(this.#pending(first, x));
    else {
      // The last answers, for everyone: "Approved by Ann".
      for (const a of x.answered.slice(-2)) parts.push(this.#answered(a));
    }
    if (x.secret && !first) parts.push(this.#secret(x.title, x.secret.mayType));
    this.element.replaceChildren(...parts);
    this.element.hidden = parts.length === 0;
    this.element.dataset.kind = first ? 'approval' : x.secret ? 'secret' : parts.length ? 'answered' : '';
    if (focused) this.element.querySelector<HTMLElement>(`[data-focus="${focused}"]`)?.focus();
  }

  /** Puts the keyboard on the bar's first button (the palette's Go to Approval); false when there is none. */
  focus(): boolean {
    const b = this.element.querySelector<HTMLElement>('.approval-reason, button:not([disabled])');
    b?.focus();
    return !!b;
  }

  #pending(a: Approval, x: ApprovalBarInput): HTMLElement {
    const busy = x.answering(a.id);
    const more = x.pending.length > 1 ? h('span.approval-more', null, `1 of ${x.pending.length}`) : null;
    const why = whyText(a);
    const el = h(
      'div.approval.pending',
      { 'data-approval': a.id },
      h(
        'div.approval-head',
        null,
        svg(icons.shield),
        h('span.approval-who', null, `${requesterLabel(a)} wants to run`),
        why ? h('span.approval-why', { title: why }, why) : null,
        more,
      ),
      h('pre.approval-command', { title: 'The command line, exactly as it would run (control characters shown as escapes)' }, visibleCommand(a.commandLine)),
    );
    if (!x.mayAnswer) {
      el.append(h('div.approval-actions', null, h('span.approval-waiting', null, a.requestedBy.kind === 'driver' ? 'Waiting for the owner to answer' : 'Waiting for the owner or whoever has control to answer')));
      return el;
    }
    const actions = h('div.approval-actions');
    if (this.#denying === a.id) {
      const input = h('input.approval-reason', { type: 'text', maxlength: 256, placeholder: 'Reason (optional), told to the agent', 'aria-label': 'Reason for denying (optional)', 'data-focus': 'reason', value: this.#draft || undefined });
      input.addEventListener('input', () => (this.#draft = input.value));
      const deny = () => {
        const reason = input.value;
        this.#denying = undefined;
        this.#draft = '';
        this.#act.answer(a.id, 'deny', reason);
      };
      input.addEventListener('keydown', (e) => {
        if (e.key !== 'Enter') return;
        e.preventDefault();
        deny();
      });
      actions.append(
        input,
        h('button.button.approval-deny-confirm', { type: 'button', 'data-focus': 'deny-confirm', disabled: busy, onclick: deny }, 'Deny'),
        h('button.button.secondary.approval-deny-cancel', { type: 'button', 'data-focus': 'deny-cancel', onclick: () => this.#cancelDeny() }, 'Cancel'),
      );
    } else {
      const word = alwaysAllowWord(a.commandLine);
      actions.append(
        h('button.button.approval-approve', { type: 'button', 'data-focus': 'approve', disabled: busy, title: 'Run this command line once', onclick: () => this.#act.answer(a.id, 'approve') }, 'Approve'),
        h('button.button.secondary.approval-deny', { type: 'button', 'data-focus': 'deny', disabled: busy, title: 'Do not run it (you may say why)', onclick: () => this.#startDeny(a.id) }, 'Deny…'),
      );
      if (word) {
        const title = `Run it, and from now on run \`${word}\` without asking (added to the requester's rules)`;
        actions.append(h('button.button.secondary.approval-always', { type: 'button', 'data-focus': 'always', disabled: busy, title, onclick: () => this.#act.answer(a.id, 'approve', undefined, true) }, 'Always Allow ', h('code', null, word)));
      }
    }
    el.append(actions);
    return el;
  }

  #answered(a: Approval): HTMLElement {
    const ok = a.state === 'approved';
    return h(
      'div.approval.answered',
      { 'data-approval': a.id, 'data-state': a.state },
      svg(ok ? icons.pass : icons.error, `codicon ${ok ? 'approval-ok' : 'approval-no'}`),
      h('span.approval-outcome', null, outcomeText(a)),
      h('code.approval-command-inline', { title: visibleCommand(a.commandLine) }, visibleCommand(a.commandLine)),
    );
  }

  #secret(title: string, mayType: boolean): HTMLElement {
    return h(
      'div.approval.secret',
      null,
      svg(icons.key),
      h('span.approval-secret-text', null, secretPromptText(title, mayType)),
      mayType ? h('button.button.approval-type', { type: 'button', 'data-focus': 'type', onclick: () => this.#act.focusTerminal() }, 'Type It') : null,
    );
  }

  #startDeny(id: string): void {
    this.#denying = id;
    this.#draft = '';
    if (this.#last) this.render(this.#last);
    this.element.querySelector<HTMLElement>('.approval-reason')?.focus();
  }

  #cancelDeny(): void {
    this.#denying = undefined;
    this.#draft = '';
    if (this.#last) this.render(this.#last);
    this.element.querySelector<HTMLElement>('.approval-deny')?.focus();
  }

  #onKey(e: KeyboardEvent): void {
    if (e.key !== 'Escape') return;
    e.preventDefault();
    e.stopPropagation();
    if (this.#denying) this.#cancelDeny();
    else this.#act.focusTerminal();
  }
}

/** The badge of a tab or a side bar row while its terminal waits for a person (approvals.ts attentionOf). */
export function attentionBadge(att: Attention | undefined): HTMLElement | null {
  if (!att) return null;
  return h(`span.attention-badge.attention-${att.kind}` as 'span', { title: att.title, role: 'img', 'aria-label': att.title }, att.kind === 'secret' ? svg(icons.key) : att.text);
}
