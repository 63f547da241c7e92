// Live preview of a terminal's screen when its sidebar row is hovered: the
// text of x-termhost/screen in a <pre> at a readable size, refreshed while
// the pointer stays on the row.

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
      pre ??= row.appendChild(h('pre.screen-preview', { 'aria-hidden': 'true' }));
      pre.textContent = withoutBlankEnd(lines).join('\n');
      place(pre, row);
    }
    timer = window.setTimeout(() => void refresh(), refreshMs);
  };
  row.addEventListener('mouseenter', () => {
    stop();
    timer = window.setTimeout(() => void refresh(), showAfterMs);
  });
  row.addEventListener('mouseleave', stop);
}

/**
 * Fixed beside the row, so the side bar's overflow does not clip it; inside
 * the window (moved up if it would run off the bottom), and showing the
 * screen's last lines (the prompt) when it is cut.
 */
function place(pre: HTMLElement, row: HTMLElement): void {
  const margin = 8;
  const r = row.getBoundingClientRect();
  pre.style.left = `${r.right + 4}px`;
  pre.style.maxWidth = `min(100ch, ${Math.max(120, innerWidth - r.right - 4 - margin)}px)`;
  pre.style.top = `${Math.max(margin, Math.min(r.top, innerHeight - margin - pre.offsetHeight))}px`;
  pre.scrollTop = pre.scrollHeight;
}

function withoutBlankEnd(lines: string[]): string[] {
  let n = lines.length;
  while (n > 0 && lines[n - 1] === '') n--;
  return lines.slice(0, n);
}
