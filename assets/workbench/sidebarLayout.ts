// The side bar's place in the layout: shown or hidden (Ctrl+B) and its width,
// dragged on the sash (double-click resets it); both kept in this browser.
// On a narrow screen (a phone) it is a drawer instead: hidden by default,
// opened over the terminal, closed on choosing a row, tapping outside or
// Escape; that state is not kept (the desktop choice stays as it was).

const MIN_WIDTH = 170;
const MAX_WIDTH = 800;

/** Where the workbench switches to the phone layout (app.css's @media rules use the same width). */
export const NARROW_QUERY = '(max-width: 600px)';

export class SidebarLayout {
  #workbench: HTMLElement;
  #sidebar: HTMLElement;
  #relayout: () => void;
  #narrow = matchMedia(NARROW_QUERY);

  /** `relayout` runs when the editor area changed size (terminals refit). */
  constructor(workbench: HTMLElement, sidebar: HTMLElement, sash: HTMLElement, relayout: () => void) {
    this.#workbench = workbench;
    this.#sidebar = sidebar;
    this.#relayout = relayout;
    this.#wireSash(sash);
    this.#wireDrawer();
    if (localStorage.getItem('termhost.sidebar') === 'hidden') this.toggle(false);
  }

  /** The phone layout: the side bar is a drawer. */
  get narrow(): boolean {
    return this.#narrow.matches;
  }

  get visible(): boolean {
    if (this.narrow) return this.#workbench.classList.contains('drawer-open');
    return !this.#workbench.classList.contains('sidebar-hidden');
  }

  toggle(show = !this.visible): void {
    if (this.narrow) {
      this.#setDrawer(show);
      return;
    }
    this.#workbench.classList.toggle('sidebar-hidden', !show);
    localStorage.setItem('termhost.sidebar', show ? 'shown' : 'hidden');
    this.#relayout();
  }

  /** The drawer overlays the terminal: opening it does not resize the terminal. */
  #setDrawer(open: boolean): void {
    this.#workbench.classList.toggle('drawer-open', open);
  }

  #wireDrawer(): void {
    const scrim = document.createElement('div');
    scrim.className = 'drawer-scrim';
    scrim.addEventListener('click', () => this.#setDrawer(false));
    this.#sidebar.after(scrim);
    // Choosing a terminal or a command (row actions stop their clicks) or New Terminal.
    this.#sidebar.addEventListener('click', (e) => {
      if ((e.target as Element).closest('.list-row, .welcome-view .button')) this.#closeIfNarrow();
    });
    this.#sidebar.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.target as Element).closest('.list-row')) this.#closeIfNarrow();
    });
    // Capture: a picker or dialog above the drawer is still open here and takes its own Escape.
    document.addEventListener(
      'keydown',
      (e) => {
        if (e.key !== 'Escape' || !this.narrow || !this.visible) return;
        if (document.querySelector('.dialog-overlay, .quick-input-widget:not([hidden])')) return;
        // The key closes the drawer only (not also an ESC to the shell).
        e.preventDefault();
        e.stopPropagation();
        this.#setDrawer(false);
      },
      true,
    );
    this.#narrow.addEventListener('change', () => {
      this.#setDrawer(false);
      this.#relayout();
    });
  }

  #closeIfNarrow(): void {
    if (this.narrow) this.#setDrawer(false);
  }

  #wireSash(sash: HTMLElement): void {
    const wb = this.#workbench;
    const saved = Number(localStorage.getItem('termhost.sidebarWidth'));
    if (saved >= MIN_WIDTH && saved <= MAX_WIDTH) wb.style.setProperty('--sidebar-width', `${saved}px`);
    sash.addEventListener('pointerdown', (e) => {
      e.preventDefault();
      sash.setPointerCapture(e.pointerId);
      sash.classList.add('active');
      const left = this.#sidebar.getBoundingClientRect().left;
      const move = (ev: PointerEvent) => {
        const w = Math.max(MIN_WIDTH, Math.min(MAX_WIDTH, ev.clientX - left));
        wb.style.setProperty('--sidebar-width', `${w}px`);
      };
      const up = () => {
        sash.classList.remove('active');
        sash.removeEventListener('pointermove', move);
        sash.removeEventListener('pointerup', up);
        localStorage.setItem('termhost.sidebarWidth', String(Math.round(this.#sidebar.getBoundingClientRect().width)));
        this.#relayout();
      };
      sash.addEventListener('pointermove', move);
      sash.addEventListener('pointerup', up);
    });
    sash.addEventListener('dblclick', () => {
      wb.style.removeProperty('--sidebar-width');
      localStorage.removeItem('termhost.sidebarWidth');
    });
  }
}
