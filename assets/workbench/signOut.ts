// Sign Out: drop the owner session cookie, then reload into the sign-in page.

import type { AhpClient } from '../ahp/client';

export async function signOut(basePath: string, client: AhpClient, notifyError: (message: string) => void): Promise<void> {
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
