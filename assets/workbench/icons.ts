// 16×16 line icons drawn for termhost in the spirit of VS Code's codicons.
// All use currentColor.

const s = (body: string, size = 16) =>
  `<svg width="${size}" height="${size}" viewBox="0 0 16 16" fill="none" stroke="currentColor" stroke-width="1.1" stroke-linecap="round" stroke-linejoin="round">${body}</svg>`;

export const icons = {
  terminal: s('<rect x="1.5" y="2.5" width="13" height="11" rx="1"/><path d="M4 6l2.5 2L4 10"/><path d="M8 10.5h4"/>'),
  terminalLarge: `<svg width="24" height="24" viewBox="0 0 16 16" fill="none" stroke="currentColor" stroke-width="0.9" stroke-linecap="round" stroke-linejoin="round"><rect x="1.5" y="2.5" width="13" height="11" rx="1"/><path d="M4 6l2.5 2L4 10"/><path d="M8 10.5h4"/></svg>`,
  listLarge: `<svg width="24" height="24" viewBox="0 0 16 16" fill="none" stroke="currentColor" stroke-width="0.9" stroke-linecap="round"><path d="M5.5 4h9M5.5 8h9M5.5 12h9"/><circle cx="2.5" cy="4" r=".6"/><circle cx="2.5" cy="8" r=".6"/><circle cx="2.5" cy="12" r=".6"/></svg>`,
  gearLarge: `<svg width="24" height="24" viewBox="0 0 16 16" fill="none" stroke="currentColor" stroke-width="0.9" stroke-linejoin="round"><circle cx="8" cy="8" r="2"/><path d="M7 1.5h2l.4 1.7 1.2.5 1.5-.9 1.4 1.4-.9 1.5.5 1.2 1.7.4v2l-1.7.4-.5 1.2.9 1.5-1.4 1.4-1.5-.9-1.2.5-.4 1.7H7l-.4-1.7-1.2-.5-1.5.9-1.4-1.4.9-1.5-.5-1.2-1.7-.4V7l1.7-.4.5-1.2-.9-1.5 1.4-1.4 1.5.9 1.2-.5z"/></svg>`,
  add: s('<path d="M8 2.5v11M2.5 8h11"/>'),
  edit: s('<path d="M10.5 2.5l3 3-7.5 7.5H3v-3z"/><path d="M9 4l3 3"/>'),
  trash: s('<path d="M2.5 4h11M6 4V2.5h4V4M4 4l.7 9.5h6.6L12 4"/><path d="M6.5 6.5v5M9.5 6.5v5"/>'),
  split: s('<rect x="1.5" y="2.5" width="13" height="11" rx="1"/><path d="M8 2.5v11"/>'),
  close: s('<path d="M4 4l8 8M12 4l-8 8"/>'),
  link: s('<path d="M6.5 9.5l3-3"/><path d="M7.5 4.5l1-1a2.5 2.5 0 013.5 3.5l-1 1"/><path d="M8.5 11.5l-1 1A2.5 2.5 0 014 9l1-1"/>'),
  check: s('<path d="M3 8.5l3 3 7-7"/>'),
  error: s('<circle cx="8" cy="8" r="6"/><path d="M5.8 5.8l4.4 4.4M10.2 5.8l-4.4 4.4"/>'),
  pass: s('<circle cx="8" cy="8" r="6"/><path d="M5.2 8.2l2 2 3.6-3.8"/>'),
  circle: s('<circle cx="8" cy="8" r="5"/>'),
  circleFilled: `<svg width="16" height="16" viewBox="0 0 16 16"><circle cx="8" cy="8" r="4" fill="currentColor"/></svg>`,
  loading: s('<path d="M8 2a6 6 0 105.2 3"/>'),
  search: s('<circle cx="6.5" cy="6.5" r="4"/><path d="M9.5 9.5l4 4"/>'),
  arrowUp: s('<path d="M8 13V3M4 7l4-4 4 4"/>'),
  arrowDown: s('<path d="M8 3v10M4 9l4 4 4-4"/>'),
  chevronRight: s('<path d="M6 3.5L10.5 8 6 12.5"/>'),
  chevronDown: s('<path d="M3.5 6L8 10.5 12.5 6"/>'),
  filter: s('<path d="M2 3h12l-4.5 5.5V13l-3-1.5v-3z"/>'),
  filterFilled: `<svg width="16" height="16" viewBox="0 0 16 16"><path d="M2 3h12l-4.5 5.5V13l-3-1.5v-3z" fill="currentColor"/></svg>`,
  copy: s('<rect x="5" y="5" width="8.5" height="8.5" rx="1"/><path d="M3 10.5V3.5a1 1 0 011-1h7"/>'),
  remote: s('<path d="M2 6.5L5 9.5 2 12.5"/><path d="M14 3.5L11 6.5l3 3"/>'),
  plug: s('<path d="M5 2v3M11 2v3M3.5 5h9v2.5a4.5 4.5 0 01-9 0z"/><path d="M8 12v2.5"/>'),
  disconnect: s('<path d="M5 2v3M11 2v3M3.5 5h9v2.5a4.5 4.5 0 01-9 0z"/><path d="M8 12v2.5"/><path d="M2 14L14 2"/>'),
  eye: s('<path d="M1.5 8s2.5-4.5 6.5-4.5S14.5 8 14.5 8 12 12.5 8 12.5 1.5 8 1.5 8z"/><circle cx="8" cy="8" r="2"/>'),
  person: s('<circle cx="8" cy="5" r="2.5"/><path d="M3 14c.5-3 2.5-4.5 5-4.5s4.5 1.5 5 4.5"/>'),
  bell: s('<path d="M4 11V7a4 4 0 018 0v4l1 1.5H3z"/><path d="M6.5 13.5a1.5 1.5 0 003 0"/>'),
  caseSensitive: `<svg width="16" height="16" viewBox="0 0 16 16" fill="currentColor"><text x="1" y="12" font-size="9" font-family="sans-serif">Aa</text></svg>`,
  wholeWord: `<svg width="16" height="16" viewBox="0 0 16 16" fill="currentColor"><text x="2" y="10.5" font-size="8" font-family="sans-serif">ab</text><path d="M1.5 12.5h13" stroke="currentColor" fill="none"/></svg>`,
  regex: `<svg width="16" height="16" viewBox="0 0 16 16" fill="currentColor"><text x="2" y="12" font-size="10" font-family="monospace">.*</text></svg>`,
  screen: s('<rect x="1.5" y="2.5" width="13" height="9" rx="1"/><path d="M5.5 14h5M8 11.5V14"/>'),
  shield: s('<path d="M8 1.8l5.5 2v4c0 3.2-2.3 5.5-5.5 6.4C4.8 13.3 2.5 11 2.5 7.8v-4z"/><path d="M8 5v3.5"/><circle cx="8" cy="10.8" r=".4" fill="currentColor"/>'),
  key: s('<circle cx="5" cy="10.5" r="2.5"/><path d="M7 9l6-6M11 5l1.5 1.5"/>'),
  ellipsis: `<svg width="16" height="16" viewBox="0 0 16 16" fill="currentColor"><circle cx="3.5" cy="8" r="1"/><circle cx="8" cy="8" r="1"/><circle cx="12.5" cy="8" r="1"/></svg>`,
  info: s('<circle cx="8" cy="8" r="6"/><path d="M8 7.5V11"/><circle cx="8" cy="5.2" r=".4" fill="currentColor"/>'),
  warning: s('<path d="M8 2L14.5 13.5h-13z"/><path d="M8 6.5v3.5"/><circle cx="8" cy="11.8" r=".4" fill="currentColor"/>'),
  share: s('<path d="M8 1.8v8.4"/><path d="M5.3 4.3L8 1.6l2.7 2.7"/><path d="M5.5 6.5H4a1 1 0 00-1 1v5.5a1 1 0 001 1h8a1 1 0 001-1V7.5a1 1 0 00-1-1h-1.5"/>'),
  keyboard: s('<rect x="1.5" y="4" width="13" height="8" rx="1"/><path d="M4 6.5h.5M6.25 6.5h.5M8.5 6.5h.5M10.75 6.5h.5M4 9.5h8"/>'),
  signOut: s('<path d="M6 2.5H3.5a1 1 0 00-1 1v9a1 1 0 001 1H6"/><path d="M10.5 5L13.5 8l-3 3"/><path d="M13.5 8H6"/>'),
  clear: s('<path d="M3 13.5h10M5 10.5l6-6M9.5 3l3.5 3.5-5.5 5.5H4.5L3 10.5z"/>'),
};

export type IconName = keyof typeof icons;
