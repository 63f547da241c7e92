// The sign-in page's script (static/dist/login.js; no inline script, so the
// page works under script-src 'self'). It exchanges a token from the URL
// fragment (#token=… printed by termhost serve, or #share=… from a share
// link) for a cookie, then goes where the server says.

import { sentence } from './workbench/format';
import { loginFragment } from './loginLink';

interface LoginConfig {
  endpoint: string;
}

function readConfig(): LoginConfig | undefined {
  try {
    return JSON.parse(document.getElementById('termhost-login')?.textContent ?? '') as LoginConfig;
  } catch {
    return undefined;
  }
}

async function signIn(): Promise<void> {
  const cfg = readConfig();
  const params = new URLSearchParams(location.hash.slice(1));
  const token = params.get('token');
  const share = params.get('share');
  if (!cfg || (!token && !share)) return;
  // Take the secret out of the address bar and history at once.
  history.replaceState(null, '', location.pathname + location.search);
  const title = document.getElementById('login-title')!;
  const msg = document.getElementById('login-message')!;
  title.textContent = 'Signing in…';
  msg.textContent = '';
  let r: Response;
  try {
    r = await fetch(cfg.endpoint, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(token ? { token } : { share }),
    });
  } catch {
    title.textContent = 'Cannot reach the server';
    msg.textContent = 'Check your connection and reload.';
    return;
  }
  if (r.ok) {
    // The owner stays on the page the link was opened at (a terminal's
    // address with the login fragment added lands on that terminal); a share
    // goes to its own terminal.
    const j = (await r.json()) as { next: string };
    location.replace(token ? location.pathname + location.search : j.next);
    return;
  }
  const reason = sentence(await r.text());
  title.textContent = r.status === 429 ? 'Too many attempts' : 'This link does not work';
  msg.textContent = reason;
}

/** A field to paste a login link, share link or token into; it signs in from that fragment. */
function addPasteField(): void {
  const card = document.querySelector('#login .notfound-card');
  if (!card) return;
  const form = document.createElement('form');
  form.className = 'login-paste';
  const input = document.createElement('input');
  Object.assign(input, { type: 'password', name: 'link', autocomplete: 'off', spellcheck: false, placeholder: 'Paste a login link, share link or token' });
  input.setAttribute('aria-label', 'Login link, share link or token');
  const button = document.createElement('button');
  Object.assign(button, { type: 'submit', className: 'button', textContent: 'Sign In' });
  const hint = document.createElement('p');
  hint.className = 'login-paste-error';
  hint.setAttribute('role', 'alert');
  form.append(input, button, hint);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const fragment = loginFragment(input.value);
    hint.textContent = fragment ? '' : 'That is not a login link, share link or token.';
    if (!fragment) return;
    input.value = '';
    location.hash = fragment; // hashchange signs in, as when a link is pasted into the address bar
  });
  card.append(form);
}

function start(): void {
  if (!document.getElementById('login')) return;
  addPasteField();
  void signIn();
  // Pasting another link into the same tab changes only the fragment: no
  // reload, so sign in again from it (a wrong link, then the right one).
  window.addEventListener('hashchange', () => void signIn());
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
