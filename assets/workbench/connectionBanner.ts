// The connection's notes at the top of the workbench: "Connection lost.
// Reconnecting in N s…" while offline, "View only" for a viewer, and the end
// of our access (link revoked or expired, signed out) with its overlay, after
// which the page never reconnects.

import { CloseCodes, type ConnectionState, type StateDetail } from '../ahp/client';
import type { MultiHostClient } from '../ahp/multihost';
import { h, clear, svg } from './dom';
import { icons } from './icons';
import { accessLost, accessProbeUrl, restartedMessage, revokedMessage, type Role } from './access';

export interface BannerHost {
  readonly client: MultiHostClient;
  readonly role: Role;
  readonly basePath: string;
  readonly terminalId: string;
  /** Our access ended: input and the status bar must say so. */
  ended(): void;
}

export class ConnectionBanner {
  #host: BannerHost;
  #workbench: HTMLElement;
  #banner: HTMLElement;
  #timer: ReturnType<typeof setInterval> | undefined;
  #retryAt = 0;
  #endedTitle: string | undefined;
  #probeAt = 0;

  constructor(workbench: HTMLElement, banner: HTMLElement, host: BannerHost) {
    this.#workbench = workbench;
    this.#banner = banner;
    this.#host = host;
    if (host.role === 'viewer') this.#showViewOnly();
  }

  /** The title of the end of our access ("Link revoked" …), once it ended. */
  get endedTitle(): string | undefined {
    return this.#endedTitle;
  }

  onConnection(s: ConnectionState, d: StateDetail): void {
    this.#workbench.classList.toggle('offline', s === 'offline');
    if (s === 'closed') {
      this.#hide();
      // Our role changed (single sign-on): the page, loaded again, is the
      // one for the role we have now, or says we have none.
      if (d.closeCode === CloseCodes.roleChanged) location.reload();
      if (d.closeCode === CloseCodes.revoked) {
        const m = revokedMessage(d.error ?? '');
        this.#showEnded(m.title, m.detail, d.error ?? '');
      }
    }
    if (s === 'offline' && d.attempt >= 2) void this.#probeAccess();
    if (s === 'online') {
      this.#hide();
    } else if (s === 'offline') {
      this.#retryAt = d.nextRetryMs !== undefined ? Date.now() + d.nextRetryMs : 0;
      this.#render();
      clearInterval(this.#timer);
      this.#timer = setInterval(() => this.#render(), 500);
    }
  }

  #hide(): void {
    this.#banner.hidden = true;
    clearInterval(this.#timer);
  }

  #render(): void {
    const b = this.#banner;
    const client = this.#host.client;
    clear(b);
    const wait = Math.max(0, Math.ceil((this.#retryAt - Date.now()) / 1000));
    b.append(
      svg(icons.disconnect),
      h('strong', null, 'Connection lost.'),
      h('span', null, client.connection === 'offline' && this.#retryAt && wait > 0 ? ` Reconnecting in ${wait} s… Input is paused until the connection is back.` : ' Reconnecting… Input is paused until the connection is back.'),
      h('button.link-button', { type: 'button', onclick: () => client.retryNow() }, 'Retry Now'),
    );
    b.hidden = false;
  }

  /**
   * termhost restarted under us: still signed in (not "signed out"), but
   * its terminals of before are gone. Says so until dismissed.
   */
  showRestarted(kept: boolean): void {
    document.getElementById('restart-banner')?.remove();
    const b = h(
      'div.access-banner.restart-banner#restart-banner',
      { role: 'status' },
      svg(icons.info),
      h('span', null, restartedMessage(kept)),
      h('button.link-button', { type: 'button', onclick: () => b.remove() }, 'Dismiss'),
    );
    this.#banner.after(b);
  }

  /** A viewer's page says so at the top, whatever terminal is shown. */
  #showViewOnly(): void {
    const b = h(
      'div.access-banner#access-banner',
      { role: 'status' },
      svg(icons.eye),
      h('strong', null, 'View only'),
      h('span', null, 'This terminal was shared with you to watch. Your keystrokes are not sent.'),
    );
    this.#banner.after(b);
  }

  /**
   * Reconnects keep failing: a refused upgrade (401) is invisible to the
   * page, so ask for the page itself. A session or link that is gone ends
   * the retries with a clear message; anything else keeps retrying.
   */
  async #probeAccess(): Promise<void> {
    const now = Date.now();
    if (this.#endedTitle !== undefined || now - this.#probeAt < 8000) return;
    this.#probeAt = now;
    const { client, role, basePath, terminalId } = this.#host;
    let status: number;
    let why: string;
    try {
      const r = await fetch(accessProbeUrl(basePath, role, terminalId), { credentials: 'same-origin', cache: 'no-store', redirect: 'manual' });
      status = r.status;
      why = r.headers.get('Termhost-Ended') ?? ''; // why our credential ended, when the server knows
    } catch {
      return; // the server is unreachable: the retries go on
    }
    const lost = accessLost(role, status, why);
    if (!lost || client.online) return;
    client.close();
    this.#showEnded(lost.title, lost.detail, '');
  }

  /** Our access ended (share link revoked, signed out): say so; never reconnect. */
  #showEnded(title: string, detail: string, reason: string): void {
    if (this.#endedTitle !== undefined) return;
    const owner = this.#host.role === 'owner';
    this.#endedTitle = title;
    this.#workbench.classList.add('ended');
    document.getElementById('access-banner')?.remove();
    this.#banner.after(h('div.offline-banner.ended-banner#ended-banner', { role: 'alert' }, svg(icons.error), h('strong', null, `${title}.`), h('span', null, detail)));
    const overlay = h(
      'div.ended-overlay#ended-overlay',
      { 'data-title': title },
      h(
        'div.notfound-card',
        null,
        h('div.notfound-icon', { 'aria-hidden': 'true' }, '>_'),
        h('h1', null, title),
        h('p', null, `${detail}${owner ? '' : " You no longer receive this terminal's output."}`),
        reason ? h('p.ended-reason', null, `Server: ${reason}`) : null,
        owner ? h('p', null, h('button.button', { type: 'button', onclick: () => location.reload() }, 'Reload')) : null,
      ),
    );
    document.getElementById('editor')!.append(overlay);
    this.#host.ended();
  }
}
