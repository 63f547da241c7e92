// The side bar's place in the layout: shown or hidden (Ctrl+B) and its width,
// dragged on the sash (double-click resets it); both kept in this browser.

const MIN_WIDTH = 170;
const MAX_WIDTH = 800;

export class SidebarLayout {
  #workbench: HTMLElement;
  #sidebar: HTMLElement;
  #relayout: () => void;

  /** `relayout` runs when the editor area changed size (terminals refit). */
  constructor(workbench: HTMLElement, sidebar: HTMLElement, sash: HTMLElement, relayout: () => void) {
    this.#workbench = workbench;
    this.#sidebar = sidebar;
    this.#relayout = relayout;
    this.#wireSash(sash);
    if (localStorage.getItem('termhost.sidebar') === 'hidden') this.toggle(false);
  }

  get visible(): boolean {
    return !this.#workbench.classList.contains('sidebar-hidden');
  }

  toggle(show = !this.visible): void {
    this.#workbench.classList.toggle('sidebar-hidden', !show);
    localStorage.setItem('termhost.sidebar', show ? 'shown' : 'hidden');
    this.#relayout();
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
