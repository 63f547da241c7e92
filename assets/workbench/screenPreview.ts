// Live preview of a terminal's screen when its sidebar row is hovered
// (issue 16 point 5): the text of x-termhost/screen in a small <pre>,
// refreshed while the pointer stays on the row.

import { h } from './dom';

/** A terminal's screen as text lines, or undefined when the server has none. */
export type ScreenSource = (uri: string) => Promise<string[] | undefined>;

const showAfterMs = 300;
const refreshMs = 1000;

/** Shows the preview of uri's screen in row while it is hovered. */
export function attachScreenPreview(row: HTMLElement, uri: string, source: ScreenSource): void {
  let timer: number | undefined;
  let pre: HTMLElement | undefined;
  const stop = () => {
    window.clearTimeout(timer);
    timer = undefined;
    pre?.remove();
    pre = undefined;
  };
  const refresh = async () => {
    const lines = await source(uri).catch(() => undefined);
    if (timer === undefined || !row.isConnected) return stop(); // left, or the list was redrawn
    if (lines) {
      pre ??= place(row.appendChild(h('pre.screen-preview', { 'aria-hidden': 'true' })), row);
      pre.textContent = withoutBlankEnd(lines).join('\n');
    }
    timer = window.setTimeout(() => void refresh(), refreshMs);
  };
  row.addEventListener('mouseenter', () => {
    stop();
    timer = window.setTimeout(() => void refresh(), showAfterMs);
  });
  row.addEventListener('mouseleave', stop);
}

/** Fixed beside the row, so the side bar's overflow does not clip it. */
function place(pre: HTMLElement, row: HTMLElement): HTMLElement {
  const r = row.getBoundingClientRect();
  pre.style.left = `${r.right + 4}px`;
  pre.style.top = `${r.top}px`;
  return pre;
}

function withoutBlankEnd(lines: string[]): string[] {
  let n = lines.length;
  while (n > 0 && lines[n - 1] === '') n--;
  return lines.slice(0, n);
}
