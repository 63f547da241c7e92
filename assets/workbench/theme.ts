// Color themes: VS Code Dark Modern and Light Modern following the OS, plus
// high-contrast dark/light chosen from the palette. The workbench colors are
// CSS variables keyed on <html data-theme>; xterm gets an ITheme.

import type { ITheme } from '@xterm/xterm';

export type ThemeSetting = 'auto' | 'dark' | 'light' | 'hc-dark' | 'hc-light';
export type ThemeKind = Exclude<ThemeSetting, 'auto'>;

export const themeLabels: Record<ThemeSetting, string> = {
  auto: 'Follow OS (Dark Modern / Light Modern)',
  dark: 'Dark Modern',
  light: 'Light Modern',
  'hc-dark': 'Dark High Contrast',
  'hc-light': 'Light High Contrast',
};

const darkAnsi = {
  black: '#000000', red: '#cd3131', green: '#0dbc79', yellow: '#e5e510', blue: '#2472c8', magenta: '#bc3fbc', cyan: '#11a8cd', white: '#e5e5e5',
  brightBlack: '#666666', brightRed: '#f14c4c', brightGreen: '#23d18b', brightYellow: '#f5f543', brightBlue: '#3b8eea', brightMagenta: '#d670d6', brightCyan: '#29b8db', brightWhite: '#e5e5e5',
};
const lightAnsi = {
  black: '#000000', red: '#cd3131', green: '#107c10', yellow: '#949800', blue: '#0451a5', magenta: '#bc05bc', cyan: '#0598bc', white: '#555555',
  brightBlack: '#666666', brightRed: '#cd3131', brightGreen: '#14ce14', brightYellow: '#b5ba00', brightBlue: '#0451a5', brightMagenta: '#bc05bc', brightCyan: '#0598bc', brightWhite: '#a5a5a5',
};

export const xtermThemes: Record<ThemeKind, ITheme> = {
  dark: {
    ...darkAnsi,
    background: '#1f1f1f', foreground: '#cccccc', cursor: '#aeafad', cursorAccent: '#1f1f1f',
    selectionBackground: '#264f78', selectionInactiveBackground: '#3a3d41',
    scrollbarSliderBackground: 'rgba(121,121,121,0.4)', scrollbarSliderHoverBackground: 'rgba(100,100,100,0.7)', scrollbarSliderActiveBackground: 'rgba(191,191,191,0.4)',
    overviewRulerBorder: '#2b2b2b',
  },
  light: {
    ...lightAnsi,
    background: '#ffffff', foreground: '#3b3b3b', cursor: '#000000', cursorAccent: '#ffffff',
    selectionBackground: '#add6ff', selectionInactiveBackground: '#e5ebf1',
    scrollbarSliderBackground: 'rgba(100,100,100,0.4)', scrollbarSliderHoverBackground: 'rgba(100,100,100,0.7)', scrollbarSliderActiveBackground: 'rgba(0,0,0,0.6)',
    overviewRulerBorder: '#e5e5e5',
  },
  'hc-dark': {
    ...darkAnsi,
    background: '#000000', foreground: '#ffffff', cursor: '#ffffff', cursorAccent: '#000000',
    selectionBackground: '#ffffff', selectionForeground: '#000000', selectionInactiveBackground: '#808080',
    overviewRulerBorder: '#6fc3df',
  },
  'hc-light': {
    ...lightAnsi,
    background: '#ffffff', foreground: '#292929', cursor: '#0f4a85', cursorAccent: '#ffffff',
    selectionBackground: '#0f4a85', selectionForeground: '#ffffff', selectionInactiveBackground: '#a0a0a0',
    overviewRulerBorder: '#0f4a85',
  },
};

/** Colors the view code needs outside CSS (decorations, search highlights). */
export interface ViewColors {
  success: string;
  failure: string;
  /** A skip ahead's mark in the overview ruler (the CSS --warning). */
  warning: string;
  running: string;
  searchMatch: string;
  searchActive: string;
  ruler: string;
}

export const viewColors: Record<ThemeKind, ViewColors> = {
  dark: { success: '#1b81a8', failure: '#f14c4c', warning: '#cca700', running: '#ffffff', searchMatch: '#623315', searchActive: '#9e6a03', ruler: '#d186167e' },
  light: { success: '#2090d3', failure: '#e51400', warning: '#bf8803', running: '#616161', searchMatch: '#ea5c0055', searchActive: '#a8ac94', ruler: '#d186167e' },
  'hc-dark': { success: '#6fc3df', failure: '#f48771', warning: '#ffd700', running: '#ffffff', searchMatch: '#000000', searchActive: '#000000', ruler: '#f38518' },
  'hc-light': { success: '#006bbd', failure: '#b5200d', warning: '#895503', running: '#292929', searchMatch: '#ffffff', searchActive: '#ffffff', ruler: '#0f4a85' },
};

const KEY = 'termhost.theme';

export class Themes {
  setting: ThemeSetting;
  kind: ThemeKind;
  #listeners = new Set<(k: ThemeKind) => void>();
  #mq = window.matchMedia('(prefers-color-scheme: light)');

  constructor() {
    const saved = localStorage.getItem(KEY) as ThemeSetting | null;
    this.setting = saved && saved in themeLabels ? saved : 'auto';
    this.kind = this.#resolve();
    this.#mq.addEventListener('change', () => this.#update());
    this.#apply();
  }

  #resolve(): ThemeKind {
    if (this.setting !== 'auto') return this.setting;
    return this.#mq.matches ? 'light' : 'dark';
  }

  #apply(): void {
    document.documentElement.dataset.theme = this.kind;
    document.documentElement.style.colorScheme = this.kind.endsWith('light') ? 'light' : 'dark';
  }

  #update(): void {
    const k = this.#resolve();
    if (k === this.kind) return;
    this.kind = k;
    this.#apply();
    for (const fn of this.#listeners) fn(k);
  }

  set(s: ThemeSetting): void {
    this.setting = s;
    if (s === 'auto') localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, s);
    this.#update();
  }

  onChange(fn: (k: ThemeKind) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  get xterm(): ITheme {
    return xtermThemes[this.kind];
  }

  get colors(): ViewColors {
    return viewColors[this.kind];
  }
}
