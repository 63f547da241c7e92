// Sign Out: drop the owner session cookie, then reload into the sign-in page.

import type { MultiHostClient } from '../ahp/multihost';
import { icons } from './icons';
import { confirmDialog } from './quickinput';

export async function signOut(basePath: string, client: MultiHostClient, notifyError: (message: string) => void): Promise<void> {
  try {
    // JSON: the server refuses any other body type (cross-site form posts).
    const r = await fetch(`${basePath}/auth/logout`, { method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    if (!r.ok) throw new Error(`HTTP ${r.status}`);
  } catch (e) {
    notifyError(`Could not sign out: ${(e as Error).message}`);
    return;
  }
  client.close();
  location.reload();
}

/** Sign Out from the palette: asks first (it closes every terminal tab of this browser). */
export async function confirmSignOut(basePath: string, client: MultiHostClient, notifyError: (message: string) => void): Promise<void> {
  const ok = await confirmDialog({
    message: 'Sign out of termhost?',
    detail: 'This browser forgets the owner session; the terminals keep running. Sign in again with the login link termhost serve printed.',
    primary: 'Sign Out',
    icon: icons.signOut,
    severity: 'warning',
  });
  if (ok) await signOut(basePath, client, notifyError);
}
