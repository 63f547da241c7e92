package recording

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/go-json-experiment/json/jsontext"
)

// WriteText writes the output events of the asciicast read from r to w as
// plain text (see TextWriter). It streams: memory stays bounded by the
// largest event, whatever the size of the file, so that a download of a
// large recording costs the server a few buffers, not the file.
func WriteText(w io.Writer, r io.Reader) error {
	dec := jsontext.NewDecoder(r, jsontext.AllowInvalidUTF8(true))
	if _, err := dec.ReadValue(); err != nil {
		return fmt.Errorf("asciicast header: %w", err)
	}
	tw := NewTextWriter(w)
	var buf []byte
	for line := 2; ; line++ {
		tok, err := dec.ReadToken()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil || tok.Kind() != '[' {
			return fmt.Errorf("asciicast event %d: want [time, code, data]: %v", line, err)
		}
		output := false // the value read last is valid only until the next read
		for i := range 3 {
			v, err := dec.ReadValue()
			if err != nil {
				return fmt.Errorf("asciicast event %d: %w", line, err)
			}
			switch {
			case i == 1:
				output = string(v) == `"o"`
			case i == 2 && output && v.Kind() == '"':
				// Unquoted into a reused buffer: no allocation per event.
				if buf, err = jsontext.AppendUnquote(buf[:0], v); err != nil {
					return fmt.Errorf("asciicast event %d: %w", line, err)
				}
				if _, err := tw.Write(buf); err != nil {
					return err
				}
			}
		}
		if tok, err := dec.ReadToken(); err != nil || tok.Kind() != ']' {
			return fmt.Errorf("asciicast event %d: want [time, code, data]: %v", line, err)
		}
	}
	return tw.Flush()
}

// TextWriter turns terminal output into plain text as it is written:
// escape sequences dropped (charmbracelet's parser, fed across writes so
// that a sequence split between two writes is still recognised), CRLF
// written as LF. Flush writes what is buffered.
type TextWriter struct {
	w   *bufio.Writer
	p   *ansi.Parser
	cr  bool // a CR is held back: it is dropped if an LF follows
	err error
}

// NewTextWriter returns a TextWriter writing to w.
func NewTextWriter(w io.Writer) *TextWriter {
	t := &TextWriter{w: bufio.NewWriter(w), p: ansi.NewParser()}
	t.p.SetDataSize(64) // sequences' payloads (OSC, DCS…) are dropped: keep little
	t.p.SetHandler(ansi.Handler{
		Print: func(r rune) {
			t.endCR(false)
			_, err := t.w.WriteRune(r)
			t.keep(err)
		},
		Execute: func(b byte) {
			t.endCR(b == '\n')
			if b == '\r' {
				t.cr = true
				return
			}
			t.keep(t.w.WriteByte(b))
		},
	})
	return t
}

// endCR writes a held-back CR unless an LF follows.
func (t *TextWriter) endCR(lf bool) {
	if t.cr && !lf {
		t.keep(t.w.WriteByte('\r'))
	}
	t.cr = false
}

// keep remembers the first write error.
func (t *TextWriter) keep(err error) {
	if t.err == nil {
		t.err = err
	}
}

// Write converts p; its error is the underlying writer's.
func (t *TextWriter) Write(p []byte) (int, error) {
	for i, b := range p {
		if t.err != nil {
			return i, t.err
		}
		t.p.Advance(b)
	}
	return len(p), t.err
}

// Flush writes a held-back CR and the buffer.
func (t *TextWriter) Flush() error {
	t.endCR(false)
	t.keep(t.w.Flush())
	return t.err
}

// PlainText is terminal output as plain text (TextWriter).
func PlainText(output string) string {
	var b strings.Builder
	tw := NewTextWriter(&b)
	_, _ = tw.Write([]byte(output))
	_ = tw.Flush()
	return b.String()
}
