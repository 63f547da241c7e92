// The notes over a terminal: the info bar when its process has exited, and
// the claim bar when another client sizes it ("Size set by … · Take Control").

import { exitCodeOf, hasExited, type TerminalState } from '../../ahp/types';
import { h, clear, svg } from '../dom';
import { icons } from '../icons';
import { claimLabel } from '../format';

export interface ClaimBarInput {
  state: TerminalState | undefined;
  /** This tab holds the claim (sizes the pty). */
  isHolder: boolean;
  /** The mirrored terminal is scaled down to fit the pane. */
  scaled: boolean;
  clientId: string;
  role: string;
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

  render(x: ClaimBarInput): void {
    const bar = this.infobar;
    const claim = this.claimbar;
    clear(bar);
    clear(claim);
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
      bar.hidden = false;
      return;
    }
    if (x.isHolder) return;
    claim.append(svg(icons.eye), h('span', null, `Size set by ${claimLabel(st.claim, x.clientId)} · ${st.cols ?? '?'}×${st.rows ?? '?'}${x.scaled ? ' (scaled)' : ''}`));
    if (x.role !== 'viewer') {
      claim.append(h('button.link-button', { type: 'button', title: 'Size this terminal to your window (terminal/claimed)', onclick: () => this.#takeControl() }, 'Take Control'));
    }
    claim.hidden = false;
  }
}
