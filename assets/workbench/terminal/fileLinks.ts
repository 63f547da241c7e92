// File paths with a line number in terminal output (`main.go:3`,
// `./src/app.ts:10:5`, `/etc/hosts:1`), as compilers and grep print them.
// Pure text matching, so it is unit tested without xterm.

export interface FileLink {
  /** 0-based offsets of the match in the line, `end` exclusive. */
  start: number;
  end: number;
  path: string;
  line: number;
  column?: number;
}

// A path is either several segments joined by "/" or one file name with an
// extension; bare words ("localhost:8080") are not paths. `:line[:col]`
// follows. The look-behind keeps matches out of URLs (`http://host.com:80`)
// and out of longer words.
const pathLink = /(?<![\w./:~-])((?:~|\.{1,2})?\/?(?:[\w.@+-]+\/)*[\w@+-][\w.@+-]*\.[A-Za-z][\w-]*|(?:~|\.{1,2})?\/?(?:[\w.@+-]+\/)+[\w.@+-]+):(\d+)(?::(\d+))?(?![\w/])/g;

export function findFileLinks(text: string): FileLink[] {
  const out: FileLink[] = [];
  for (const m of text.matchAll(pathLink)) {
    const line = Number(m[2]);
    if (line < 1) continue;
    const link: FileLink = { start: m.index, end: m.index + m[0].length, path: m[1]!, line };
    if (m[3] !== undefined) link.column = Number(m[3]);
    out.push(link);
  }
  return out;
}
