import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LEGIBLE_FONT_PX, mirrorScale, type MirrorMode } from './sizing';

test('mirrorScale', async (t) => {
  const cases: { name: string; pane: { w: number; h: number }; content: { w: number; h: number }; fontSize: number; mode?: MirrorMode; scale: number; pan: boolean; oversize: boolean }[] = [
    { name: 'fits: never enlarged', pane: { w: 1000, h: 800 }, content: { w: 500, h: 400 }, fontSize: 14, scale: 1, pan: false, oversize: false },
    { name: 'a little too big: scaled to fit', pane: { w: 900, h: 800 }, content: { w: 1000, h: 400 }, fontSize: 14, scale: 0.9, pan: false, oversize: true },
    { name: 'a phone: held at the legible size, panned', pane: { w: 390, h: 600 }, content: { w: 1120, h: 830 }, fontSize: 14, scale: LEGIBLE_FONT_PX / 14, pan: true, oversize: true },
    { name: 'a small font: not scaled at all, panned', pane: { w: 390, h: 600 }, content: { w: 800, h: 500 }, fontSize: 9, scale: 1, pan: true, oversize: true },
    // A tmux attach at 200×50 in a laptop's pane.
    { name: '1:1: real size, panned', pane: { w: 950, h: 600 }, content: { w: 1700, h: 850 }, fontSize: 14, mode: 'actual', scale: 1, pan: true, oversize: true },
    { name: '1:1 that fits: nothing to pan', pane: { w: 1000, h: 800 }, content: { w: 500, h: 400 }, fontSize: 14, mode: 'actual', scale: 1, pan: false, oversize: false },
  ];
  for (const c of cases) {
    await t.test(c.name, () => {
      const got = mirrorScale(c.pane, c.content, c.fontSize, c.mode);
      assert.deepEqual(got, { scale: c.scale, pan: c.pan, oversize: c.oversize }, `mirrorScale(${JSON.stringify(c.pane)}, ${JSON.stringify(c.content)}, ${c.fontSize}, ${c.mode})`);
    });
  }
});
