// Formatting helpers shared by the views (pure; tested in format.test.ts).

import type { TerminalClaim } from '../ahp/types';

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`;
  const m = Math.floor(s / 60);
  const rs = Math.round(s - m * 60);
  if (m < 60) return `${m}m ${rs}s`;
  const hh = Math.floor(m / 60);
  return `${hh}h ${m - hh * 60}m`;
}

/** A size in bytes for people, in SI units: 512 → "512 B", 12_345_678 → "12.3 MB". */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n) || n < 0) return '';
  if (n < 1000) return `${Math.round(n)} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  // One decimal below 100 ("12.3 MB"), none above ("123 MB").
  const digits = (v: number) => (v < 99.95 ? v.toFixed(1) : String(Math.round(v)));
  let v = n / 1000;
  let i = 0;
  // Rounded first: 999_960 is "1.0 MB", not "1000 kB".
  while (i < units.length - 1 && Number(digits(v)) >= 1000) {
    v /= 1000;
    i++;
  }
  return `${digits(v)} ${units[i]}`;
}

// CSI, OSC (BEL or ST terminated), DCS/SOS/PM/APC strings, two-byte ESC sequences, C0 controls except \n and \t.
// eslint-disable-next-line no-control-regex
const ansi = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[PX^_][^\x1b]*\x1b\\|\x1b[ -/]+[0-~]|\x1b[0-~]|[\x00-\x08\x0b-\x1f\x7f]/g;

/** Plain text of VT output: escapes removed, CRLF → LF, lone CR keeps the last overwrite. */
export function stripAnsi(s: string): string {
  const noEsc = s.replace(/\r\n/g, '\n').replace(ansi, (m) => (m === '\r' ? '\r' : ''));
  // A lone \r returns to column 0: keep what was written last on that line.
  return noEsc
    .split('\n')
    .map((line) => {
      if (!line.includes('\r')) return line;
      const parts = line.split('\r');
      let out = '';
      for (const p of parts) out = p + out.slice(p.length);
      return out;
    })
    .join('\n');
}

/** Who holds a claim, for people. */
export function claimLabel(c: TerminalClaim | undefined, me: string): string {
  if (!c) return 'nobody';
  // Without presence, a person is not known by name: never show a raw client id.
  if (c.kind === 'client') return c.clientId === me ? 'you' : 'another client';
  return 'an agent session';
}

/** `file:///home/u/src` → `~/src` when home is known, else the decoded path. */
export function cwdLabel(uri: string | undefined, home?: string): string {
  if (!uri) return '';
  let p = uri;
  if (uri.startsWith('file://')) {
    p = uri.slice('file://'.length);
    const slash = p.indexOf('/');
    p = slash >= 0 ? p.slice(slash) : '/';
    try {
      p = decodeURIComponent(p);
    } catch {
      /* keep as is */
    }
  }
  if (home && (p === home || p.startsWith(home + '/'))) p = '~' + p.slice(home.length);
  return p;
}

/** A random id for a new terminal (URL-safe). */
export function newTerminalId(random: () => number = Math.random): string {
  const alphabet = 'abcdefghijkmnopqrstuvwxyz23456789';
  let s = '';
  const c = globalThis.crypto;
  if (c?.getRandomValues) {
    const b = new Uint8Array(10);
    c.getRandomValues(b);
    for (const x of b) s += alphabet[x % alphabet.length];
  } else {
    for (let i = 0; i < 10; i++) s += alphabet[Math.floor(random() * alphabet.length)];
  }
  return s;
}

/** A server's message as a sentence for people: capital first letter, final full stop. */
export function sentence(s: string): string {
  const t = s.trim();
  if (!t) return t;
  const capital = t[0]!.toUpperCase() + t.slice(1);
  return /[.!?…]$/.test(capital) ? capital : capital + '.';
}
