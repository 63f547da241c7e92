// The Share dialog (owner only): create a viewer or driver link to one
// terminal with an expiry, copy it (the secret is shown once), and list and
// revoke the terminal's live links. It speaks termhost's x-share/* AHP
// extension commands on the root channel.

import type { MultiHostClient } from '../ahp/multihost';
import { extMethods, type ShareCreateParams, type ShareInfo, type ShareListParams, type ShareListResult, type ShareRevokeParams } from '../ahp/ext';
import { ROOT_CHANNEL } from '../ahp/types';
import { h, clear, svg, overlayClosed, dialogKeys } from './dom';
import { icons } from './icons';
import { expiryLabel, roleLabels, shareExpiries, shareRoleNote } from './access';

export interface ShareHost {
  client: MultiHostClient;
  /** The Unix account and host the shells run as ("" if the page does not know). */
  config: { serverUser: string; serverHost: string };
  notify(kind: 'info' | 'error' | 'warning', message: string): void;
  copyText(text: string): Promise<void>;
}

/** The expiry a new link gets unless changed: the same as `termhost share`'s --ttl default (internal/cli/share.go). */
export const DEFAULT_SHARE_TTL_SECONDS = 86400;

const roleChoices = [
  { role: 'viewer' as const, label: 'Viewer — can watch (view only)' },
  { role: 'driver' as const, label: 'Driver — can type: full shell access' },
];

function errText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Opens the Share dialog for a terminal; resolves when it closes. */
export function openShareDialog(host: ShareHost, terminal: string, title: string): Promise<void> {
  return new Promise((resolve) => {
    const restore = document.activeElement as HTMLElement | null;
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      overlay.remove();
      document.removeEventListener('keydown', onKey, true);
      clearInterval(tick);
      // Back to where typing was (a terminal, an input); not to the Share
      // button that opened the dialog: with the keyboard idle, the workbench
      // gives it to the active terminal (overlayClosed).
      if (restore?.isConnected && !restore.closest('button, a, [role="button"], [role="menuitem"]')) restore.focus();
      resolve();
      overlayClosed();
    };

    const roleSelect = h('select.select-box#share-role', { 'aria-label': 'Access' }) as HTMLSelectElement;
    for (const c of roleChoices) roleSelect.append(h('option', { value: c.role }, c.label));
    // Viewer is the default: the safe choice. Picking driver says what it hands over.
    roleSelect.value = 'viewer';
    const roleNote = h('div.share-role-note#share-role-note', { role: 'note' });
    const renderRoleNote = () => {
      const role = roleSelect.value as 'viewer' | 'driver';
      roleNote.textContent = shareRoleNote(role, host.config.serverUser, host.config.serverHost);
      roleNote.classList.toggle('warning', role === 'driver');
      roleNote.dataset.role = role;
    };
    roleSelect.addEventListener('change', renderRoleNote);
    renderRoleNote();
    // Who the link is for: its name in the presence list ("alice", "CI dashboard").
    const labelInput = h('input.share-label-input#share-name', { type: 'text', maxlength: 64, placeholder: 'e.g. alice (optional)', spellcheck: 'false', 'aria-label': 'Name' }) as HTMLInputElement;
    const expirySelect = h('select.select-box#share-expiry', { 'aria-label': 'Expires' }) as HTMLSelectElement;
    for (const e of shareExpiries) expirySelect.append(h('option', { value: String(e.seconds) }, e.label));
    expirySelect.value = String(DEFAULT_SHARE_TTL_SECONDS);

    const createBtn = h('button.button.primary#share-create', { type: 'button' }, 'Create Link');
    const error = h('div.share-error', { role: 'alert', hidden: true });
    const urlInput = h('input.share-url-input#share-url', { type: 'text', readonly: true, spellcheck: 'false', 'aria-label': 'Share link' }) as HTMLInputElement;
    const copyBtn = h('button.button.secondary#share-copy', { type: 'button' }, svg(icons.copy), h('span', null, 'Copy'));
    const created = h(
      'div.share-created',
      { hidden: true },
      h('div.share-url-row', null, urlInput, copyBtn),
      h('div.share-note', null, svg(icons.warning, 'codicon share-note-icon'), h('span#share-created-note', null, '')),
    );
    const listEl = h('div.share-list#share-list', { role: 'list' });
    const countEl = h('span.share-count');
    const doneBtn = h('button.button.secondary', { type: 'button', onclick: close }, 'Done');

    let shares: ShareInfo[] = [];
    const showError = (msg: string | undefined) => {
      error.textContent = msg ?? '';
      error.hidden = !msg;
    };

    const renderList = () => {
      clear(listEl);
      countEl.textContent = shares.length ? String(shares.length) : '';
      if (!shares.length) {
        listEl.append(h('div.share-empty', null, 'No active links. Create one above.'));
        return;
      }
      const now = Date.now();
      for (const s of shares) {
        const revoke = h('button.button.secondary.small.share-revoke', { type: 'button', title: 'Revoke this link: anyone using it is disconnected at once' }, 'Revoke') as HTMLButtonElement;
        revoke.addEventListener('click', async () => {
          revoke.disabled = true;
          revoke.textContent = 'Revoking…';
          try {
            await host.client.request(extMethods.shareRevoke, { channel: ROOT_CHANNEL, id: s.id } satisfies ShareRevokeParams);
            host.notify('info', `${roleLabels[s.role]} link revoked: anyone using it was disconnected.`);
          } catch (e) {
            showError(`Could not revoke the link: ${errText(e)}`);
          }
          await refresh();
        });
        const created = new Date(s.createdAt);
        listEl.append(
          h(
            'div.share-item',
            { role: 'listitem', 'data-share': s.id, 'data-role': s.role },
            svg(s.role === 'viewer' ? icons.eye : icons.keyboard, `codicon share-role-icon ${s.role}`),
            h('span.share-role', null, s.label ? `${s.label} · ${roleLabels[s.role]}` : roleLabels[s.role]),
            h('span.share-meta', { title: `Created ${created.toLocaleString()}${s.expiresAt ? `\nExpires ${new Date(s.expiresAt).toLocaleString()}` : ''}` }, `${expiryLabel(s.expiresAt, now)} · created ${created.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })}`),
            revoke,
          ),
        );
      }
    };

    const refresh = async () => {
      try {
        const r = (await host.client.request(extMethods.shareList, { channel: ROOT_CHANNEL, terminal } satisfies ShareListParams)) as Partial<ShareListResult> | undefined;
        shares = r?.shares ?? [];
        renderList();
      } catch (e) {
        showError(`Could not list the links: ${errText(e)}`);
      }
    };

    createBtn.addEventListener('click', async () => {
      showError(undefined);
      const role = roleSelect.value as 'viewer' | 'driver';
      const ttlSeconds = Number(expirySelect.value);
      createBtn.setAttribute('disabled', '');
      try {
        const label = labelInput.value.trim();
        const r = (await host.client.request(extMethods.shareCreate, { channel: ROOT_CHANNEL, terminal, role, ttlSeconds, ...(label ? { label } : {}) } satisfies ShareCreateParams)) as ShareInfo;
        urlInput.value = r.url ?? '';
        urlInput.dataset.role = r.role;
        created.hidden = false;
        created.querySelector('#share-created-note')!.textContent = `${roleLabels[r.role]} link, ${expiryLabel(r.expiresAt, Date.now())}. Copy it now: it is shown only once.`;
        urlInput.focus();
        // Selected for copying, with the start (origin and path) in view.
        urlInput.setSelectionRange(0, urlInput.value.length, 'backward');
        urlInput.scrollLeft = 0;
        await refresh();
      } catch (e) {
        showError(`Could not create the link: ${errText(e)}`);
      } finally {
        createBtn.removeAttribute('disabled');
      }
    });
    copyBtn.addEventListener('click', () => {
      urlInput.setSelectionRange(0, urlInput.value.length, 'backward');
      void host.copyText(urlInput.value);
    });

    const box = h(
      'div.dialog-box.share-dialog#share-dialog',
      { role: 'dialog', 'aria-modal': 'true', 'aria-labelledby': 'share-dialog-title' },
      h(
        'div.share-header',
        null,
        svg(icons.share, 'codicon share-header-icon'),
        h('div.share-heading', null, h('div.dialog-message#share-dialog-title', null, `Share “${title}”`), h('div.dialog-detail', null, 'Anyone with a link can open this one terminal, nothing else on this server, until the link expires or you revoke it.')),
        h('button.icon-button.share-close', { type: 'button', title: 'Close (Escape)', 'aria-label': 'Close', onclick: close }, svg(icons.close)),
      ),
      h(
        'div.share-form',
        null,
        h('label.share-label', { for: 'share-role' }, 'Access'),
        roleSelect,
        h('span'),
        roleNote,
        h('label.share-label', { for: 'share-name' }, 'For'),
        labelInput,
        h('label.share-label', { for: 'share-expiry' }, 'Expires after'),
        h('div.share-expiry-row', null, expirySelect, createBtn),
      ),
      error,
      created,
      h('div.share-section-title', null, h('span', null, 'Active links'), countEl),
      listEl,
      h('div.dialog-buttons', null, doneBtn),
    );
    const overlay = h('div.dialog-overlay', null, box);
    overlay.addEventListener('mousedown', (e) => {
      if (e.target === overlay) close();
    });
    const onKey = dialogKeys(box, close);
    document.addEventListener('keydown', onKey, true);
    // Expiry labels count down while the dialog is open.
    const tick = setInterval(() => shares.length && renderList(), 30_000);
    document.body.append(overlay);
    renderList();
    void refresh();
    roleSelect.focus();
  });
}
