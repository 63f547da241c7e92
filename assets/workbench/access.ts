// Access: roles, the WebSocket URL a page must use for its role, and the
// share-link vocabulary of the Share dialog (pure; tested in access.test.ts).

export type Role = 'owner' | 'driver' | 'viewer';

/** A role from the page config; anything unknown is treated as the least privileged. */
export function parseRole(v: unknown): Role {
  if (v === 'owner' || v === 'driver' || v === 'viewer') return v;
  return v === undefined || v === '' ? 'owner' : 'viewer';
}

/**
 * The AHP WebSocket URL. A share link's page opens `<base>/ws?terminal=<id>`
 * so that the server picks the share cookie of that terminal (a browser may
 * hold links to several terminals); the owner opens `<base>/ws`.
 */
export function wsUrl(loc: { protocol: string; host: string }, basePath: string, role: Role, terminalId: string): string {
  const proto = loc.protocol === 'https:' ? 'wss:' : 'ws:';
  const base = basePath.replace(/\/+$/, '');
  const url = `${proto}//${loc.host}${base}/ws`;
  return role !== 'owner' && terminalId ? `${url}?terminal=${encodeURIComponent(terminalId)}` : url;
}

export const roleLabels: Record<Role, string> = { owner: 'Owner', driver: 'Driver', viewer: 'Viewer' };

export const roleDescriptions: Record<Role, string> = {
  owner: 'You own this server: every terminal, sharing and sign-out.',
  driver: 'Shared with you to drive: you can rename and clear this terminal, and type into it and size it while you have control (Request Control asks whoever has it).',
  viewer: 'Shared with you to watch: view only, your keystrokes are not sent.',
};

/** Who the shells run as, for the Share dialog: "alice on build-01", or the server's user. */
export function shellAccount(user: string, host: string): string {
  if (!user) return "the server's user";
  return host ? `${user} on ${host}` : user;
}

/**
 * What a link of `role` hands over, shown in the Share dialog where the
 * owner picks the role. A driver gets a shell: whatever that Unix user can
 * do, including reading termhost's token file and so becoming the owner.
 */
export function shareRoleNote(role: 'viewer' | 'driver', user: string, host: string): string {
  if (role === 'viewer') return 'A viewer sees this terminal’s screen and nothing else: it cannot type. This is the safe choice.';
  return `A driver can type into this terminal: it is a shell running as ${shellAccount(user, host)}; anyone with the link can do anything that user can, including reading termhost’s own files (its owner token) and so taking over this server. Share a driver link only with someone you would give that account to.`;
}

/** Expiry choices of a new share link (ttlSeconds 0 = never expires). */
export const shareExpiries: readonly { label: string; seconds: number }[] = [
  { label: '1 hour', seconds: 3600 },
  { label: '24 hours', seconds: 86400 },
  { label: '7 days', seconds: 604800 },
  { label: 'Never', seconds: 0 },
];

/** "expires in 59 min", "expires in 6 d 23 h", "never expires", "expired". */
export function expiryLabel(expiresAt: number | undefined, now: number): string {
  if (expiresAt === undefined || expiresAt === null) return 'never expires';
  const left = expiresAt - now;
  if (left <= 0) return 'expired';
  const min = Math.ceil(left / 60_000);
  if (min < 60) return `expires in ${min} min`;
  const hours = Math.floor(min / 60);
  if (hours < 24) {
    const m = min - hours * 60;
    return `expires in ${hours} h${m ? ` ${m} min` : ''}`;
  }
  const days = Math.floor(hours / 24);
  const h = hours - days * 24;
  return `expires in ${days} d${h ? ` ${h} h` : ''}`;
}

/** A page's words for the end of its access: a title and what to do. */
export interface EndedMessage {
  title: string;
  detail: string;
}

const askForNewLink = 'Ask the person who shared this terminal for a new link.';
const signInAgain = 'Open the login link that termhost serve printed to sign in again.';

/**
 * Why a credential ended, as the server says it in the Termhost-Ended header
 * of a 401 (handlers/ended.go), in words for the page's role. An unknown or
 * missing reason gets the general message.
 */
export function endedMessage(role: Role, why: string): EndedMessage {
  if (role === 'owner') {
    switch (why) {
      case 'token-changed':
        return {
          title: 'Signed out: the owner token changed',
          detail: 'termhost was started with a new owner token (--new-token), which signs everyone out. Open the new login link that termhost serve printed.',
        };
      case 'signed-out':
        return { title: 'You are signed out', detail: `This browser signed out (Sign Out, in this tab or another). ${signInAgain}` };
      case 'session-expired':
        return { title: 'Your session expired', detail: signInAgain };
      default:
        return { title: 'You are signed out', detail: `Your session ended (signed out, or it expired). ${signInAgain}` };
    }
  }
  switch (why) {
    case 'revoked':
      return { title: 'This share link was revoked', detail: askForNewLink };
    case 'expired':
      return { title: 'This share link has expired', detail: askForNewLink };
    case 'terminal-closed':
      return { title: 'The shared terminal was closed', detail: 'Its owner closed it, which ended this link.' };
    case 'restart':
      return { title: 'termhost restarted — the shared terminal is gone', detail: `The server restarted and the terminal shared with you did not survive it, so this link ended. ${askForNewLink}` };
    case 'token-changed':
      return { title: 'The owner signed everyone out', detail: `termhost's owner token was changed, which ends every share link. ${askForNewLink}` };
    default:
      return { title: 'This share link was revoked or has expired', detail: askForNewLink };
  }
}

/** The message a page shows when the server ended its share link (close 4003), from the close reason. */
export function revokedMessage(reason: string): EndedMessage {
  const r = reason.trim().toLowerCase();
  if (r.includes('dispos')) return endedMessage('viewer', 'terminal-closed');
  if (r.includes('expired') && !r.includes('revoked')) return endedMessage('viewer', 'expired');
  if (r.includes('revoked') && !r.includes('expired')) return endedMessage('viewer', 'revoked');
  return endedMessage('viewer', '');
}

/**
 * The page a reconnecting client fetches to learn whether it may still get
 * in: a WebSocket refused with 401 looks like a network failure to a
 * browser, the page's HTTP status does not.
 */
export function accessProbeUrl(basePath: string, role: Role, terminalId: string): string {
  const base = basePath.replace(/\/+$/, '');
  return role !== 'owner' && terminalId ? `${base}/t/${encodeURIComponent(terminalId)}` : `${base}/`;
}

/** What a page says after termhost restarted under it: still signed in, its terminals gone or kept. */
export function restartedMessage(kept: boolean): string {
  return kept ? 'termhost restarted — your terminals are still running.' : 'termhost restarted — terminals from before the restart are gone.';
}

/**
 * Whether a re-initialize (the server no longer knew our clientId) was a
 * restart rather than our reconnect window running out: the server's
 * sequence went back, or every terminal we knew of is gone.
 */
export function serverRestarted(seqBefore: number, seqNow: number, before: readonly string[], now: readonly string[]): boolean {
  if (seqNow < seqBefore) return true;
  const live = new Set(now);
  return before.length > 0 && before.every((t) => !live.has(t));
}

/**
 * What a page says when the probe shows its access is gone (why: the 401's
 * Termhost-Ended header); undefined = keep retrying.
 */
export function accessLost(role: Role, status: number, why = ''): EndedMessage | undefined {
  if (status === 401) return endedMessage(role, why);
  if (status === 404 && role !== 'owner') return { title: 'This terminal no longer exists', detail: 'It was closed by its owner.' };
  return undefined;
}

/**
 * The base of the links this page hands out (Copy Link, a dragged tab): the
 * public URL the server states in initialize (extMeta.publicUrl, behind a
 * reverse proxy), else this page's own origin and base path.
 */
export function linkBase(publicUrl: unknown, origin: string, basePath: string): string {
  if (typeof publicUrl === 'string' && /^https?:\/\/[^/]/i.test(publicUrl)) return publicUrl.replace(/\/+$/, '');
  return origin + basePath.replace(/\/+$/, '');
}

/**
 * Whether a plain /t/<id> link copied on this page works for whoever it is
 * passed to. The owner's does (the recipient signs in as usual, or it is the
 * owner again). A share link's viewer or driver does not know the link's
 * secret (the cookie holds it): the page would only show the sign-in screen
 * to the recipient, so "Copy Link" is not offered to them.
 */
export function linksWorkForOthers(role: Role | string): boolean {
  return role === 'owner';
}
