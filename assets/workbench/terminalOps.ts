// What a user does to a terminal as a whole, after asking where needed:
// rename, kill (confirmed while it runs), take control of its size, share.
// The server checks the same roles; these only spare a useless request.

import type { MultiHostClient } from '../ahp/multihost';
import { hasExited, type TerminalInfo, type TerminalState } from '../ahp/types';
import { icons } from './icons';
import { confirmDialog, type Notify, type QuickInput } from './quickinput';
import { openShareDialog, type ShareHost } from './share';
import type { Role } from './access';

export interface OpsHost extends ShareHost {
  readonly client: MultiHostClient;
  readonly role: Role;
  /** The id this page claims terminals with. */
  readonly clientId: string;
  notify: Notify;
  catalogue(): TerminalInfo[];
  /** The title shown for a terminal (open or not). */
  titleOf(uri: string): string;
}

export class TerminalOps {
  #host: OpsHost;
  #quick: QuickInput;

  constructor(host: OpsHost, quick: QuickInput) {
    this.#host = host;
    this.#quick = quick;
  }

  async rename(uri: string): Promise<void> {
    const { client, notify } = this.#host;
    const info = this.#info(uri);
    const cur = client.state<TerminalState>(uri)?.title ?? info?.title ?? '';
    const title = await this.#quick.input({ value: cur, prompt: 'Enter a new name for the terminal (empty restores the automatic title)', title: 'Rename Terminal' });
    if (title === undefined || title === cur) return;
    if (client.dispatch(uri, { type: 'terminal/titleChanged', title }) === undefined) notify('warning', 'Offline: the terminal was not renamed.');
  }

  async kill(uri: string): Promise<void> {
    const info = this.#info(uri);
    const running = info ? !hasExited(info) : true;
    const name = info?.title ?? this.#host.titleOf(uri);
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
      await this.#host.client.disposeTerminal(uri);
    } catch (e) {
      this.#host.notify('error', `Could not kill the terminal: ${(e as Error).message}`);
    }
  }

  /** Size the terminal to this window (terminal/claimed); `isHolder`: we already do. */
  takeControl(uri: string, isHolder: boolean): void {
    const { client, role, clientId, notify } = this.#host;
    if (role === 'viewer' || isHolder) return;
    if (client.dispatch(uri, { type: 'terminal/claimed', claim: { kind: 'client', clientId } }) === undefined) {
      notify('warning', 'Offline: cannot take control.');
    }
  }

  /** The Share dialog of a terminal (owner only). */
  share(uri: string): void {
    const { client, role, notify } = this.#host;
    if (role !== 'owner') return;
    if (!client.onlineFor(uri)) {
      notify('warning', 'Cannot manage share links while offline.');
      return;
    }
    void openShareDialog(this.#host, uri, this.#host.titleOf(uri));
  }

  #info(uri: string): TerminalInfo | undefined {
    return this.#host.catalogue().find((t) => t.resource === uri);
  }
}
