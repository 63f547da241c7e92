package cli

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"golang.org/x/term"

	"github.com/termhost/termhost/ahp"
)

// makeRaw puts the local terminal in raw mode when stdin and stdout are
// terminals and stdin is forwarded; the returned function restores it (and
// may be called more than once).
func (s *session) makeRaw() func() {
	if !s.forwardStdin || !s.ttyOut {
		return func() {}
	}
	fd, ok := fdOf(s.a.stdin)
	if !ok || !term.IsTerminal(fd) {
		return func() {}
	}
	old, err := term.MakeRaw(fd)
	if err != nil {
		s.note("cannot put the terminal in raw mode: %v", err)
		return func() {}
	}
	s.raw = true
	var once sync.Once
	return func() {
		once.Do(func() {
			_ = term.Restore(fd, old)
			s.raw = false
		})
	}
}

// handleSignals handles SIGWINCH (resize), SIGINT (sent on as Ctrl-C when the
// terminal is not raw) and SIGTERM/SIGHUP/SIGQUIT (end, leaving the remote
// terminal running).
func (s *session) handleSignals(ctx context.Context, cancel context.CancelCauseFunc, wg *sync.WaitGroup) {
	ch := make(chan os.Signal, 8)
	signal.Notify(ch, syscall.SIGWINCH, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer signal.Stop(ch)
		for {
			select {
			case <-ctx.Done():
				return
			case sig := <-ch:
				switch sig {
				case syscall.SIGWINCH:
					if s.ttyOut {
						s.resize(ctx)
					}
				case syscall.SIGINT:
					if !s.typing.Load() {
						continue
					}
					_, _ = s.c.Dispatch(ctx, s.uri, ahp.Action{Type: ahp.TerminalInput, Data: "\x03"})
				default:
					cancel(signalled{sig.(syscall.Signal)})
					return
				}
			}
		}
	}()
}

// resize sends the local size when it changed and this client holds the
// claim: only the holder sizes the terminal.
func (s *session) resize(ctx context.Context) {
	cols, rows, ok := termSize(s.a.stdout)
	if !ok || !s.holding.Load() {
		return
	}
	s.sizeMu.Lock()
	defer s.sizeMu.Unlock()
	if s.lastSize == [2]int{cols, rows} {
		return
	}
	if _, err := s.c.Dispatch(ctx, s.uri, ahp.Action{Type: ahp.TerminalResized, Cols: cols, Rows: rows}); err == nil {
		s.lastSize = [2]int{cols, rows}
	}
}

// fdOf returns a file's descriptor without switching it to blocking mode
// (os.File.Fd would), so read deadlines keep working.
func fdOf(f *os.File) (int, bool) {
	if f == nil {
		return 0, false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, false
	}
	fd := -1
	if rc.Control(func(u uintptr) { fd = int(u) }) != nil || fd < 0 {
		return 0, false
	}
	return fd, true
}

// isTerminal reports whether w is an *os.File on a terminal.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fd, ok := fdOf(f)
	return ok && term.IsTerminal(fd)
}

// termSize is the size of the terminal w is on.
func termSize(w any) (cols, rows int, ok bool) {
	f, isFile := w.(*os.File)
	if !isFile {
		return 0, 0, false
	}
	fd, ok := fdOf(f)
	if !ok {
		return 0, 0, false
	}
	cols, rows, err := term.GetSize(fd)
	if err != nil || cols < 1 || rows < 1 {
		return 0, 0, false
	}
	return min(cols, ahp.MaxDimension), min(rows, ahp.MaxDimension), true
}
