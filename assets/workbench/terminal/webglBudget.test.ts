import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chooseRenderer, isSoftwareRenderer, rendererLabel, type GpuKind } from './webglBudget';
import type { RendererSetting } from '../settings';

test('isSoftwareRenderer: GPUs emulated on the CPU', () => {
  const cases: { name: string; renderer: string; want: boolean }[] = [
    { name: 'headless Chromium', renderer: 'ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device (Subzero) (0x0000C0DE)), SwiftShader driver)', want: true },
    { name: 'Mesa llvmpipe', renderer: 'llvmpipe (LLVM 15.0.6, 256 bits)', want: true },
    { name: 'Mesa softpipe', renderer: 'softpipe', want: true },
    { name: 'Windows without a driver', renderer: 'ANGLE (Microsoft, Microsoft Basic Render Driver Direct3D11 vs_5_0 ps_5_0)', want: true },
    { name: 'generic software', renderer: 'Software Rasterizer', want: true },
    { name: 'Intel', renderer: 'ANGLE (Intel, Mesa Intel(R) UHD Graphics 620 (KBL GT2), OpenGL 4.6)', want: false },
    { name: 'Apple', renderer: 'Apple M1', want: false },
    { name: 'NVIDIA', renderer: 'ANGLE (NVIDIA, NVIDIA GeForce RTX 3060 Direct3D11 vs_5_0 ps_5_0, D3D11)', want: false },
  ];
  for (const c of cases) assert.equal(isSoftwareRenderer(c.renderer), c.want, `${c.name}: isSoftwareRenderer(${JSON.stringify(c.renderer)})`);
});

test('chooseRenderer: auto uses WebGL on a hardware GPU only; the setting wins', () => {
  const cases: { name: string; setting: RendererSetting; gpu: GpuKind; lost?: boolean; want: string }[] = [
    { name: 'auto, hardware', setting: 'auto', gpu: 'hardware', want: 'WebGL — hardware GPU' },
    { name: 'auto, software', setting: 'auto', gpu: 'software', want: 'DOM — software GPU detected' },
    { name: 'auto, no WebGL', setting: 'auto', gpu: 'none', want: 'DOM — WebGL unavailable' },
    { name: 'auto after a context loss', setting: 'auto', gpu: 'hardware', lost: true, want: 'DOM — a WebGL context was lost on this page' },
    { name: 'webgl forced on software', setting: 'webgl', gpu: 'software', want: 'WebGL — chosen in settings' },
    { name: 'webgl forced after a loss', setting: 'webgl', gpu: 'hardware', lost: true, want: 'WebGL — chosen in settings' },
    { name: 'dom forced on hardware', setting: 'dom', gpu: 'hardware', want: 'DOM — chosen in settings' },
  ];
  for (const c of cases) {
    const got = rendererLabel(chooseRenderer(c.setting, () => c.gpu, c.lost));
    assert.equal(got, c.want, `${c.name}: chooseRenderer(${c.setting}, ${c.gpu}, lost=${!!c.lost})`);
  }
});

test('chooseRenderer probes the GPU only for auto', () => {
  let probes = 0;
  const gpu = (): GpuKind => (probes++, 'hardware');
  chooseRenderer('dom', gpu);
  chooseRenderer('webgl', gpu);
  assert.equal(probes, 0, 'probes for dom and webgl');
  chooseRenderer('auto', gpu);
  assert.equal(probes, 1, 'probes for auto');
});
