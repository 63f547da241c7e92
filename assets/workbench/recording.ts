// Recordings (termhost's extension, docs/protocol.md "Recording"): the
// catalogue entry's _meta["termhost/recording"] says whether a terminal has
// a recording and whether it is running; the owner toggles it with the
// x-termhost/record request; anyone who may see the terminal downloads it
// from <base>/t/<id>/recording.cast, and its output as text from …/output.txt.

import type { MultiHostClient } from '../ahp/multihost';
import { extMeta, extMethods, type RecordingState, type RecordParams } from '../ahp/ext';
import { terminalIdOf, type TerminalInfo } from '../ahp/types';

export type { RecordingState };

/** The recording state of a catalogue entry; undefined: no recording. */
export function recordingStateOf(info: TerminalInfo | undefined): RecordingState | undefined {
  const v = info?._meta?.[extMeta.recording];
  return v === 'recording' || v === 'paused' || v === 'stopped' ? v : undefined;
}

/** Starts, pauses or resumes a terminal's recording (owner only). */
export async function setRecording(client: MultiHostClient, uri: string, on: boolean): Promise<void> {
  await client.request(extMethods.record, { channel: uri, on } satisfies RecordParams);
}

/** The download URL of a terminal's recording or output text. */
export function downloadUrl(basePath: string, uri: string, file: 'recording.cast' | 'output.txt'): string {
  return `${basePath}/t/${encodeURIComponent(terminalIdOf(uri))}/${file}`;
}

/** Downloads url with the browser (the response names the file). */
export function download(url: string): void {
  const a = document.createElement('a');
  a.href = url;
  a.download = '';
  a.rel = 'noopener';
  document.body.append(a);
  a.click();
  a.remove();
}
