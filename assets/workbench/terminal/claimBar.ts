// The notes over a terminal: the info bar when its process has exited, and
// the claim bar when another client sizes it ("Controlled by alice · 80×24 ·
// Request Control"), or when we took control from an agent (Hand Back).
// Requests for control to us, the holder, are a notification (presence.ts),
// never a bar over the terminal's first line.

import { exitCodeOf, hasExited, type TerminalState } from '../../ahp/types';
import { h, patchChildren, svg } from '../dom';
import { icons } from '../icons';
import { claimLabel } from '../format';
import type { Control } from './presence';
import { mirrorMode, setMirrorMode } from './sizing';

export interface ClaimBarInput {
  state: TerminalState | undefined;
  /** This tab holds the claim: it types into and sizes the pty. */
  isHolder: boolean;
  /** This tab may type now (mayDrive): the holder, or nobody here holds it. */
  hasControl?: boolean;
  /** The mirrored terminal is scaled down to fit the pane. */
  scaled: boolean;
  /** The mirrored terminal is bigger than the pane: offer fit / 1:1. */
  oversize?: boolean;
  clientId: string;
  role: string;
  uri?: string;
  /** Presence and control requests (absent: only the claim is known). */
  control?: Control;
  /** Opens the replay of an exited terminal's recording (absent: nothing to replay). */
  replay?: () => void;
  /** The owner took control of an agent's terminal: hand it back (agentMark.ts; absent: nothing to hand back). */
  handBack?: { name: string; run: () => void };
}

export class ClaimBar {
  /** Above the terminal: takes rows of its own. */
  readonly infobar = h('div.terminal-infobar', { hidden: true });
  /** Floating over the terminal, so it takes no rows from the mirrored pty size. */
  readonly claimbar = h('div.terminal-claimbar', { hidden: true });
  #takeControl: () => void;

  constructor(takeControl: () => void) {
    this.#takeControl = takeControl;
  }

  /**
   * Draws the bars for x on detached copies and changes the page only
   * where they differ: presence and the catalogue redraw often, and a
   * button taken out of the page between its press and its release (even
   * to be put back) loses the click.
   */
  render(x: ClaimBarInput): void {
    const bar = this.infobar.cloneNode(false) as HTMLElement;
    const claim = this.claimbar.cloneNode(false) as HTMLElement;
    this.#draw(x, bar, claim);
    for (const [live, drawn] of [
      [this.infobar, bar],
      [this.claimbar, claim],
    ]) {
      live.className = drawn.className;
      live.hidden = drawn.hidden;
      patchChildren(live, drawn);
    }
  }

  #draw(x: ClaimBarInput, bar: HTMLElement, claim: HTMLElement): void {
    bar.hidden = claim.hidden = true;
    const st = x.state;
    if (!st) return;
    if (hasExited(st)) {
      const code = exitCodeOf(st);
      bar.className = 'terminal-infobar ' + (code === undefined || code === 0 ? 'info' : 'error');
      bar.append(
        svg(code === undefined || code === 0 ? icons.info : icons.error),
        h('span', null, code === undefined ? 'The terminal process exited.' : `The terminal process exited with code ${code}.`),
      );
      if (x.replay) bar.append(h('button.link-button.replay-open', { type: 'button', title: 'Replay the recording, command by command', onclick: x.replay }, 'Replay'));
      bar.hidden = false;
      return;
    }
    const control = x.uri ? x.control : undefined;
    if (x.isHolder) {
      // Requests for control to us are told once, in a notification (presence.ts).
      if (x.handBack) {
        claim.append(
          svg(icons.person),
          h('span.claim-holder', null, `You have control (taken from ${x.handBack.name})`),
          h('button.link-button.claim-handback', { type: 'button', title: `Give the terminal back to ${x.handBack.name}: its commands run here again`, onclick: x.handBack.run }, 'Hand Back to Agent'),
        );
        claim.hidden = false;
      }
      return;
    }
    const holder = control && x.uri ? control.holderLabel(x.uri, st.claim) : claimLabel(st.claim, x.clientId);
    const size = `${st.cols ?? '?'}×${st.rows ?? '?'}${x.scaled ? ' (scaled)' : ''}`;
    if (holder === 'nobody' && x.hasControl && x.role !== 'viewer') {
      // Nobody here has control: the first to type (or take it) gets it.
      claim.append(svg(icons.eye), h('span.claim-holder', null, `Nobody in control · ${size} · type to take control`));
      claim.hidden = false;
      return;
    }
    claim.append(svg(icons.eye), h('span.claim-holder', null, `Controlled by ${holder} · ${size}`));
    const scaleToggle = x.oversize ? this.#scaleToggle() : undefined;
    const asked = control && x.uri ? control.outgoing(x.uri) : undefined;
    if (asked) {
      const auto = asked.autoGrantMs ? ` (yours in ${Math.round(asked.autoGrantMs / 1000)} s if they are away)` : '';
      claim.append(h('span.claim-waiting', null, `· Asked for control…${auto}`));
    } else if (x.role === 'owner') {
      claim.append(h('button.link-button.claim-take', { type: 'button', title: 'Take control: you type into this terminal and size it to your window (the holder is told)', onclick: () => this.#takeControl() }, 'Take Control'));
    } else if (x.role !== 'viewer') {
      claim.append(h('button.link-button.claim-request', { type: 'button', title: 'Ask whoever has control to hand it to you (yours by itself if they are away); until then you watch', onclick: () => this.#takeControl() }, 'Request Control'));
    }
    if (scaleToggle) claim.append(scaleToggle);
    claim.hidden = false;
  }

  /** Fit (scaled down, legible) or 1:1 (real size, the pane pans): remembered by this browser. */
  #scaleToggle(): HTMLElement {
    const actual = mirrorMode() === 'actual';
    return h(
      'button.link-button.claim-scale',
      {
        type: 'button',
        'data-mode': actual ? 'actual' : 'fit',
        title: actual ? 'Scale the terminal down to fit this pane (never below a legible size)' : 'Show the terminal at its real size; scroll to pan',
        onclick: () => setMirrorMode(actual ? 'fit' : 'actual'),
      },
      actual ? 'Fit' : '1:1',
    );
  }
}
