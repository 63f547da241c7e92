package cli

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/termhost/termhost/ahp"
)

// pumpStdin forwards stdin as terminal/input until a detach key, end of
// input or the end of ctx. The returned function stops it: it unblocks the
// read when stdin supports deadlines, else leaves the goroutine to the
// process's exit.
func (s *session) pumpStdin(ctx context.Context, cancel context.CancelCauseFunc) func() {
	in := s.a.stdin
	done := make(chan struct{})
	var mu sync.Mutex // guards d and timer
	d := detacher{lineStart: true, answer: s.answerPending}
	var timer *time.Timer
	send := func(b []byte) {
		if len(b) > 0 && s.typing.Load() {
			_, _ = s.c.Dispatch(ctx, s.uri, ahp.Action{Type: ahp.TerminalInput, Data: string(b)})
		}
	}
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		var carry []byte
		for {
			n, err := in.Read(buf)
			if n > 0 {
				mu.Lock()
				out, detach := d.feed(buf[:n])
				if timer != nil {
					timer.Stop()
					timer = nil
				}
				if d.held() && !detach {
					timer = time.AfterFunc(detachWait, func() {
						mu.Lock()
						b := d.release()
						mu.Unlock()
						send(b)
					})
				}
				mu.Unlock()
				var whole []byte
				whole, carry = splitUTF8(append(carry, out...))
				send(whole)
				if detach {
					cancel(errDetached)
					return
				}
			}
			if err != nil {
				if ctx.Err() == nil && errors.Is(err, io.EOF) {
					cancel(errDetached)
				}
				return
			}
			if ctx.Err() != nil {
				return
			}
		}
	}()
	return func() {
		mu.Lock()
		if timer != nil {
			timer.Stop()
		}
		mu.Unlock()
		if in.SetReadDeadline(time.Now()) == nil {
			<-done
			_ = in.SetReadDeadline(time.Time{})
		}
	}
}

// detachWait is how long a single Ctrl-\ waits for a second before it is
// sent on.
const detachWait = time.Second

// detacher finds the detach keys in typed input: Ctrl-\ twice, or "~." at the
// start of a line. It holds back a Ctrl-\ or a line-start "~" until the next
// byte tells what it is.
type detacher struct {
	// answer, if set, answers a pending request for control (Ctrl-\ y
	// grants, Ctrl-\ n declines) and reports whether there was one; without
	// one the keys are sent on.
	answer    func(grant bool) bool
	lineStart bool
	ctrl      bool // a Ctrl-\ is held
	tilde     bool // a line-start ~ is held
}

const ctrlBackslash = 0x1c

// feed returns the bytes to send and whether a detach sequence was typed
// (the bytes after it are dropped).
func (d *detacher) feed(in []byte) (out []byte, detach bool) {
	for _, b := range in {
		switch {
		case d.ctrl:
			d.ctrl = false
			if b == ctrlBackslash {
				return out, true
			}
			if (b == 'y' || b == 'n') && d.answer != nil && d.answer(b == 'y') {
				continue
			}
			out = append(out, ctrlBackslash)
			d.lineStart = false
		case d.tilde:
			d.tilde = false
			switch b {
			case '.':
				return out, true
			case '~':
				out = append(out, '~')
				d.lineStart = false
				continue
			}
			out = append(out, '~')
			d.lineStart = false
		}
		switch {
		case b == ctrlBackslash:
			d.ctrl = true
		case b == '~' && d.lineStart:
			d.tilde = true
		default:
			out = append(out, b)
			d.lineStart = b == '\r' || b == '\n'
		}
	}
	return out, false
}

// held reports a held Ctrl-\ (a held ~ waits for the next key, like ssh).
func (d *detacher) held() bool { return d.ctrl }

// release gives up a held Ctrl-\ after detachWait.
func (d *detacher) release() []byte {
	if !d.ctrl {
		return nil
	}
	d.ctrl, d.lineStart = false, false
	return []byte{ctrlBackslash}
}

// splitUTF8 splits off an incomplete UTF-8 sequence at the end of b, to be
// sent with the next read (a JSON string cannot carry half a character).
func splitUTF8(b []byte) (whole, rest []byte) {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i], append([]byte(nil), b[i:]...)
			}
			break
		}
	}
	return b, nil
}
