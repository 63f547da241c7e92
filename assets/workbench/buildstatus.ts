// Build status at a glance: document title and favicon for the focused
// terminal (running / ✓ / ✗ code), and optional browser notifications when a
// command or terminal finishes while the tab is in the background.

export type BuildKind = 'none' | 'idle' | 'running' | 'success' | 'failure' | 'exited';

export interface BuildStatus {
  kind: BuildKind;
  code?: number;
  title: string;
}

export function titleFor(s: BuildStatus): string {
  const name = s.title ? `${s.title} — termhost` : 'termhost';
  switch (s.kind) {
    case 'running':
      return `⟳ ${name}`;
    case 'success':
    case 'exited':
      return `✓ ${name}`;
    case 'failure':
      return `✗ ${s.code ?? ''}${s.code === undefined ? '' : ' '}${name}`;
    default:
      return name;
  }
}

const esc = (s: string) => encodeURIComponent(s).replace(/'/g, '%27');

export function faviconFor(s: BuildStatus): string {
  let body: string;
  switch (s.kind) {
    case 'running':
      body =
        "<rect width='32' height='32' rx='6' fill='#0078d4'/>" +
        "<circle cx='16' cy='16' r='9' fill='none' stroke='#ffffff55' stroke-width='4'/>" +
        "<path d='M16 7a9 9 0 0 1 9 9' fill='none' stroke='#fff' stroke-width='4' stroke-linecap='round'/>";
      break;
    case 'success':
    case 'exited':
      body = "<rect width='32' height='32' rx='6' fill='#2ea043'/><path d='M8 16.5l5 5 11-11' fill='none' stroke='#fff' stroke-width='4' stroke-linecap='round' stroke-linejoin='round'/>";
      break;
    case 'failure': {
      const code = s.code === undefined ? '✗' : String(s.code);
      const size = code.length <= 1 ? 24 : code.length === 2 ? 19 : 13;
      body =
        "<rect width='32' height='32' rx='6' fill='#e51400'/>" +
        `<text x='16' y='${16 + size * 0.36}' font-family='Arial,Helvetica,sans-serif' font-weight='700' font-size='${size}' text-anchor='middle' fill='#fff'>${code.replace(/[<&]/g, '')}</text>`;
      break;
    }
    default:
      body =
        "<rect width='32' height='32' rx='6' fill='#1f1f1f'/>" +
        "<path d='M7 10l6 6-6 6' fill='none' stroke='#cccccc' stroke-width='3' stroke-linecap='round' stroke-linejoin='round'/><path d='M16 23h9' stroke='#cccccc' stroke-width='3' stroke-linecap='round'/>";
  }
  return `data:image/svg+xml,${esc(`<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 32 32'>${body}</svg>`)}`;
}

export class BuildIndicator {
  #last = '';

  update(s: BuildStatus): void {
    const title = titleFor(s);
    if (document.title !== title) document.title = title;
    const icon = faviconFor(s);
    if (icon === this.#last) return;
    this.#last = icon;
    let link = document.getElementById('termhost-favicon') as HTMLLinkElement | null;
    if (!link) {
      link = document.createElement('link');
      link.id = 'termhost-favicon';
      link.rel = 'icon';
      document.head.append(link);
    }
    link.type = 'image/svg+xml';
    link.href = icon;
  }
}

const NOTIFY_KEY = 'termhost.notifications';

export class BackgroundNotifier {
  get enabled(): boolean {
    return typeof Notification !== 'undefined' && Notification.permission === 'granted' && localStorage.getItem(NOTIFY_KEY) === 'on';
  }

  get supported(): boolean {
    return typeof Notification !== 'undefined';
  }

  async enable(): Promise<NotificationPermission | 'unsupported'> {
    if (typeof Notification === 'undefined') return 'unsupported';
    const p = Notification.permission === 'granted' ? 'granted' : await Notification.requestPermission();
    if (p === 'granted') localStorage.setItem(NOTIFY_KEY, 'on');
    return p;
  }

  disable(): void {
    localStorage.removeItem(NOTIFY_KEY);
  }

  /** Notify only while the page is hidden (a background tab). */
  notify(title: string, body: string, tag: string, onClick: () => void): void {
    if (!this.enabled || !document.hidden) return;
    try {
      const n = new Notification(title, { body, tag, icon: undefined, silent: false });
      n.onclick = () => {
        window.focus();
        onClick();
        n.close();
      };
    } catch {
      /* some browsers only allow notifications from a service worker */
    }
  }
}
