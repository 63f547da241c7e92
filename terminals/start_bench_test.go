package terminals

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/terminals/pty"
	"github.com/termhost/termhost/terminals/shellint"
)

// BenchmarkStartToPrompt: from createTerminal to the first prompt in the
// channel, with shell integration, against the same injected bash spawned
// on a pty and read directly (the baseline, in the same run, alternating).
// It reports both means and their difference:
//
//	go test -run '^$' -bench StartToPrompt -benchtime 20x ./terminals/
func BenchmarkStartToPrompt(b *testing.B) {
	home := b.TempDir()
	// The system bashrc may set its own prompt; the user's, read after it, wins.
	if err := os.WriteFile(home+"/.bashrc", []byte("PS1='$ '\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "PS1=$ ", "HISTFILE=/dev/null", "TERM=xterm-256color"}
	m, err := NewManager(Config{Shell: "/bin/bash", Cwd: home, Env: env, ShellIntegration: true, DisposeGrace: 100 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	scripts := b.TempDir()
	if err := os.Chmod(scripts, 0o700); err != nil {
		b.Fatal(err)
	}
	var raw, server time.Duration
	for i := 0; i < b.N; i++ {
		d, err := rawStartToPrompt(scripts, env)
		if err != nil {
			b.Fatal(err)
		}
		raw += d
		uri := fmt.Sprintf("ahp-terminal:/start-%d", i)
		t0 := time.Now()
		rec, err := createAndSubscribe(m, uri)
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err = rec.waitFor(ctx, "$ ")
			cancel()
		}
		server += time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		_ = m.Dispose(uri)
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(b.N) / 1e6 }
	b.ReportMetric(ms(raw), "raw-ms/op")
	b.ReportMetric(ms(server), "server-ms/op")
	b.ReportMetric(ms(server)-ms(raw), "delta-ms/op")
}

// createAndSubscribe is claimedTerminal without a testing.T.
func createAndSubscribe(m *Manager, uri string) (*recorder, error) {
	claim := ahp.ClientClaim("me")
	if err := m.Create(ahp.CreateTerminalParams{Channel: uri, Claim: &claim}); err != nil {
		return nil, err
	}
	rec := newRecorder("me")
	snap, err := m.Subscribe(rec, uri)
	if err != nil {
		return nil, err
	}
	if st, ok := snap.State.(ahp.TerminalState); ok {
		rec.mu.Lock()
		for _, p := range st.Content {
			rec.frames = append(rec.frames, p.Text())
		}
		rec.mu.Unlock()
	}
	return rec, nil
}

// rawStartToPrompt spawns the injected bash on a pty and reads it until the
// prompt; it returns the time from spawning to the prompt.
func rawStartToPrompt(scripts string, env []string) (time.Duration, error) {
	t0 := time.Now()
	inj, err := shellint.Inject(scripts, "/bin/bash", nil, env)
	if err != nil {
		return 0, err
	}
	defer os.Remove(inj.NonceFile) // emptied by the script; the server deletes it
	p, err := pty.Start(pty.Spec{Argv: inj.Argv, Env: inj.Env, Cols: 80, Rows: 24})
	if err != nil {
		return 0, err
	}
	defer func() { p.Kill(0); _ = p.Close(); <-p.Done() }()
	p.SetReadDeadline(func(bool) (time.Time, bool) { return time.Now().Add(10 * time.Second), true })
	buf := make([]byte, 4096)
	var out strings.Builder
	for !strings.Contains(out.String(), "$ ") {
		n, err := p.Read(func() []byte { return buf }, func() {}, nil)
		if err != nil {
			return 0, fmt.Errorf("raw shell: %w (read %q)", err, out.String())
		}
		out.Write(buf[:n])
	}
	return time.Since(t0), nil
}
