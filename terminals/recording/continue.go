package recording

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Continue reopens the recording at o.Path, written by an earlier Recorder
// (a predecessor's, before an upgrade), and goes on appending to it: a
// partial last line is cut, the times go on from the header's start, and
// note is written as a marker, then the current size. A recording that
// was paused (its last event is the pause marker) stays paused: nothing is
// written until Resume. o.Cols, o.Rows and o.Title come from the header.
func Continue(o Options, note string, cols, rows int) (*Recorder, error) {
	o.setDefaults()
	f, err := os.OpenFile(o.Path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("recording file: %w", err)
	}
	r, err := continueFile(o, f)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	go r.run()
	if note != "" {
		r.Marker(note) // dropped when paused, as every event
	}
	r.Resize(cols, rows)
	return r, nil
}

func continueFile(o Options, f *os.File) (*Recorder, error) {
	line, err := bufio.NewReader(io.NewSectionReader(f, 0, 1<<20)).ReadBytes('\n')
	if err != nil {
		return nil, fmt.Errorf("recording header: %w", err)
	}
	var h Header
	if err := json.Unmarshal(line, &h); err != nil || h.Version != 2 {
		return nil, fmt.Errorf("recording header: not asciicast v2 (%v)", err)
	}
	size, err := CompleteLength(f)
	if err != nil {
		return nil, err
	}
	if err := f.Truncate(size); err != nil {
		return nil, fmt.Errorf("recording file: %w", err)
	}
	if _, err := f.Seek(size, io.SeekStart); err != nil {
		return nil, fmt.Errorf("recording file: %w", err)
	}
	o.Cols, o.Rows, o.Title = h.Width, h.Height, h.Title
	// The header's second is at or before the first Recorder's start, so
	// the times stamped from it never go back.
	start := time.Unix(h.Timestamp, 0)
	r := &Recorder{opts: o, start: start, wake: make(chan struct{}, 1), done: make(chan struct{}), file: f,
		size: size, truncated: size >= o.Max-reserve}
	r.last = max(0, o.Clock().Sub(start))
	r.paused, err = endsPaused(f, size)
	return r, err
}

// pausedMarker is the marker Pause writes.
const pausedMarker = "recording paused"

// endsPaused reports whether the last event of the first size bytes of f
// is the pause marker.
func endsPaused(f *os.File, size int64) (bool, error) {
	buf := make([]byte, min(size, 4096))
	if _, err := f.ReadAt(buf, size-int64(len(buf))); err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("recording file: %w", err)
	}
	buf = bytes.TrimSuffix(buf, []byte("\n"))
	ev, err := parseEvent(buf[bytes.LastIndexByte(buf, '\n')+1:])
	return err == nil && ev.Code == "m" && ev.Data == pausedMarker, nil
}

// CompleteLength is the length of f up to its last newline: the recorder
// writes whole lines, so what follows is a line being written (or cut by a
// crash). It reads backwards, a block at a time.
func CompleteLength(f *os.File) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	buf := make([]byte, 32<<10)
	for end := fi.Size(); end > 0; {
		start := max(0, end-int64(len(buf)))
		n, err := f.ReadAt(buf[:end-start], start)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return 0, nil
}
