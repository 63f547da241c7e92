// Package recording writes a terminal's output as an asciicast v2 file
// (https://docs.asciinema.org/manual/asciicast/v2/), the format asciinema
// and its player read: a header line, then one JSON array per event —
// output "o", resize "r" and markers "m". Input is never recorded: it may
// hold passwords typed at a no-echo prompt.
//
// A Recorder is fed by the terminal's reader goroutine, which must never
// wait for the disk: events are appended to a queue bounded in bytes and a
// writer goroutine owned by the Recorder encodes and writes them in
// batches. If the writer falls that far behind, output is left out and the
// gap is written as a marker, never silently.
package recording

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/termhost/termhost/ahp"
)

// Defaults of Options.
const (
	DefaultMax     = 64 << 20 // file size cap
	DefaultPending = 4 << 20  // bytes of output queued for the writer
	// MaxLabel bounds a marker's label (a command line can be long).
	MaxLabel = 200
	// reserve keeps room under Max for the final "truncated" marker.
	reserve = 256
)

// Options configure a Recorder.
type Options struct {
	Path       string // the .cast file, created (or truncated) 0600 in a 0700 directory
	Cols, Rows int
	Title      string
	Env        map[string]string // the header's env: TERM and SHELL
	Max        int64             // file size cap (default DefaultMax)
	Pending    int               // queue bound in bytes (default DefaultPending)
	Clock      func() time.Time  // nil = time.Now
	Logger     *slog.Logger
}

func (o *Options) setDefaults() {
	if o.Max <= 0 {
		o.Max = DefaultMax
	}
	if o.Pending <= 0 {
		o.Pending = DefaultPending
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// event is one queued asciicast event.
type event struct {
	at   time.Duration
	code string
	data string
}

// Recorder records one terminal. Its methods are safe for concurrent use
// and never block on the disk.
type Recorder struct {
	opts  Options
	start time.Time

	mu      sync.Mutex
	queue   []event
	queued  int  // bytes of data in queue
	skipped int  // output bytes left out since the last batch (queue full)
	paused  bool // events are ignored
	closed  bool
	last    time.Duration // events are stamped monotonically

	wake chan struct{} // cap 1: the queue has something
	done chan struct{} // closed when the writer has returned

	// Writer goroutine only.
	file      *os.File
	out       []byte // the lines of the batch being written (from batchBufs)
	size      int64
	truncated bool
	carry     string // an incomplete UTF-8 sequence at the end of the last output
	line      []byte // reused for each event line
}

// Start creates the file, writes the header and starts the writer.
func Start(o Options) (*Recorder, error) {
	o.setDefaults()
	if err := os.MkdirAll(filepath.Dir(o.Path), 0o700); err != nil {
		return nil, fmt.Errorf("recording directory: %w", err)
	}
	f, err := os.OpenFile(o.Path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("recording file: %w", err)
	}
	r := &Recorder{opts: o, start: o.Clock(), wake: make(chan struct{}, 1), done: make(chan struct{}),
		file: f}
	if err := r.writeHeader(); err != nil {
		_ = f.Close()
		_ = os.Remove(o.Path)
		return nil, err
	}
	go r.run()
	return r, nil
}

// Path is the file written.
func (r *Recorder) Path() string { return r.opts.Path }

// Output records terminal output.
func (r *Recorder) Output(data string) {
	if data != "" {
		r.add("o", data)
	}
}

// Resize records a new terminal size.
func (r *Recorder) Resize(cols, rows int) {
	r.add("r", strconv.Itoa(cols)+"x"+strconv.Itoa(rows))
}

// Marker records a marker, e.g. the command line of a command that starts.
// The label is clipped to MaxLabel bytes of valid UTF-8 on one line.
func (r *Recorder) Marker(label string) { r.add("m", Label(label)) }

// Pause stops recording until Resume; what happens meanwhile is left out.
func (r *Recorder) Pause() {
	r.add("m", pausedMarker)
	r.mu.Lock()
	r.paused = true
	r.mu.Unlock()
}

// Resume records again, from the terminal's current size.
func (r *Recorder) Resume(cols, rows int) {
	r.mu.Lock()
	r.paused = false
	r.mu.Unlock()
	r.add("m", "recording resumed")
	r.Resize(cols, rows)
}

// Paused reports whether the recorder is paused.
func (r *Recorder) Paused() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.paused
}

// add queues an event, or counts skipped output when the queue is full.
func (r *Recorder) add(code, data string) {
	r.mu.Lock()
	if r.closed || r.paused {
		r.mu.Unlock()
		return
	}
	at := max(r.opts.Clock().Sub(r.start), r.last)
	r.last = at
	if code == "o" && r.queued+len(data) > r.opts.Pending {
		r.skipped += len(data)
	} else {
		r.queue = append(r.queue, event{at: at, code: code, data: data})
		r.queued += len(data)
	}
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Close records the last events, closes the file and stops the writer. A
// final marker (e.g. how the command exited) is written first when not "".
func (r *Recorder) Close(final string) {
	if final != "" {
		r.add("m", Label(final))
	}
	r.mu.Lock()
	already := r.closed
	r.closed = true
	r.mu.Unlock()
	if !already {
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
	<-r.done
}

// run is the writer goroutine: it takes the whole queue at once and
// writes it, until Close.
func (r *Recorder) run() {
	defer close(r.done)
	defer func() {
		if err := r.file.Close(); err != nil {
			r.opts.Logger.Warn("recording close", "err", err)
		}
	}()
	var batch []event
	for {
		<-r.wake
		r.mu.Lock()
		batch, r.queue = r.queue, batch[:0]
		r.queued = 0
		skipped, last, closed := r.skipped, r.last, r.closed
		r.skipped = 0
		r.mu.Unlock()
		buf := batchBufs.Get().(*[]byte)
		r.out = (*buf)[:0]
		for _, ev := range batch {
			r.write(ev)
		}
		if skipped > 0 {
			r.write(event{at: last, code: "m", data: fmt.Sprintf("recording skipped %d bytes of output: the disk did not keep up", skipped)})
		}
		clear(batch)
		r.flushOrStop()
		*buf, r.out = r.out[:0], nil
		batchBufs.Put(buf)
		if closed {
			return
		}
	}
}

func (r *Recorder) writeHeader() error {
	h := struct {
		Version   int               `json:"version"`
		Width     int               `json:"width"`
		Height    int               `json:"height"`
		Timestamp int64             `json:"timestamp"`
		Env       map[string]string `json:"env,omitempty"`
		Title     string            `json:"title,omitempty"`
	}{2, r.opts.Cols, r.opts.Rows, r.start.Unix(), r.opts.Env, Label(r.opts.Title)}
	b, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("recording header: %w", err)
	}
	r.writeLine(b)
	err = r.flush()
	r.out = nil
	if err != nil {
		return fmt.Errorf("recording header: %w", err)
	}
	return nil
}

// write appends one event line, up to the size cap: the event that would
// pass it is replaced by a last marker, after which nothing is written.
func (r *Recorder) write(ev event) {
	if r.truncated {
		return
	}
	if ev.code == "o" {
		// JSON strings are UTF-8: a character split between two reads is
		// written whole with the second.
		ev.data = r.carry + ev.data
		r.carry = ""
		if cut := incompleteTail(ev.data); cut < len(ev.data) {
			ev.data, r.carry = ev.data[:cut], ev.data[cut:]
		}
		if ev.data == "" {
			return
		}
	}
	r.line = appendEvent(r.line[:0], ev)
	if r.size+int64(len(r.line))+1 > r.opts.Max-reserve {
		r.truncated = true
		r.line = appendEvent(r.line[:0], event{at: ev.at, code: "m", data: fmt.Sprintf("recording truncated at %d bytes (--record-max)", r.size)})
	}
	r.writeLine(r.line)
}

// writeLine adds a line to the batch, written out every flushAt bytes.
func (r *Recorder) writeLine(b []byte) {
	r.out = append(append(r.out, b...), '\n')
	r.size += int64(len(b)) + 1
	if len(r.out) >= flushAt {
		r.flushOrStop()
	}
}

// flushAt bounds the batch buffer (a write per 64 KiB, as a bufio.Writer).
const flushAt = 64 << 10

// flushOrStop flushes; after a failed write (a full disk) nothing more is
// tried.
func (r *Recorder) flushOrStop() {
	if err := r.flush(); err != nil {
		r.opts.Logger.Warn("recording write", "err", err)
		r.truncated = true
	}
}

// flush writes the batch to the file in one write.
func (r *Recorder) flush() error {
	_, err := r.file.Write(r.out)
	r.out = r.out[:0]
	return err
}

// batchBufs hold batches while they are written, so that an idle
// recorder holds no buffer.
var batchBufs = sync.Pool{New: func() any { return new([]byte) }}

// appendEvent appends [time, code, data] with the time in seconds to the µs.
func appendEvent(b []byte, ev event) []byte {
	b = append(b, '[')
	b = strconv.AppendFloat(b, ev.at.Seconds(), 'f', 6, 64)
	b = append(b, `, "`...)
	b = append(b, ev.code...)
	b = append(b, `", `...)
	b = ahp.AppendString(b, ev.data) // terminal output's fast path; invalid UTF-8 becomes U+FFFD
	return append(b, ']')
}

// incompleteTail is where an incomplete UTF-8 sequence at the end of s
// starts, or len(s).
func incompleteTail(s string) int {
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax+1; i-- {
		if c := s[i]; c < utf8.RuneSelf {
			return len(s)
		} else if utf8.RuneStart(c) {
			if !utf8.FullRuneInString(s[i:]) {
				return i
			}
			return len(s)
		}
	}
	return len(s)
}

// Label makes a marker label: valid UTF-8, one line, at most MaxLabel bytes.
func Label(s string) string {
	b := make([]byte, 0, min(len(s), MaxLabel))
	for _, c := range s {
		if c == utf8.RuneError || c < ' ' || c == 0x7f {
			c = ' '
		}
		if len(b)+utf8.RuneLen(c) > MaxLabel {
			break
		}
		b = utf8.AppendRune(b, c)
	}
	return string(b)
}
