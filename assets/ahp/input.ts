// A paste reaches xterm's onData as one string, whatever its size. Sent
// as one terminal/input it could pass the server's limit on an inbound
// message (1 MiB; the connection is then closed and the paste lost), and
// the server could not pace it (docs/protocol.md, "Input flow control").
// So input is sent in parts of at most MAX_INPUT_PART UTF-16 code units,
// never splitting a surrogate pair: at most 192 KiB of UTF-8, 384 KiB of
// JSON (a control character escaped as \u00XX takes 6 bytes).

export const MAX_INPUT_PART = 64 * 1024;

/** data cut into parts of at most max code units, pairs kept whole. */
export function inputParts(data: string, max = MAX_INPUT_PART): string[] {
  if (data.length <= max) return [data];
  const parts: string[] = [];
  let i = 0;
  while (i < data.length) {
    let end = Math.min(data.length, i + max);
    const last = data.charCodeAt(end - 1);
    if (end < data.length && end - i > 1 && last >= 0xd800 && last <= 0xdbff) end--; // a high surrogate stays with its low one
    parts.push(data.slice(i, end));
    i = end;
  }
  return parts;
}
