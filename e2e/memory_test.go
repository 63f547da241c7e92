//go:build e2e

package e2e

import (
	"context"
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/heapprofiler"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/termhost/termhost/internal/testenv"
)

// The volume TestBrowserMemoryBounded pushes through one terminal, a
// volume test (make test-big runs it once, without the race detector). `make
// test` uses the default; the benchmark figure in docs/BENCHMARKS.md is
// go test -tags 'e2e volume' -timeout 40m -run TestBrowserMemoryBounded -v ./e2e/ -args -browser-memory-mib=1024
var browserMemoryMiB = flag.Int("browser-memory-mib", 64, "MiB of output TestBrowserMemoryBounded pushes through one terminal")

// TestBrowserMemoryBounded: output through one terminal grows the page's JS
// heap by far less than its volume. The mirror keeps at most the server's
// default scrollback (1 MiB) of content; xterm.js keeps its own scrollback
// (10 000 lines, a few MiB at this window's width), which a first 4 MiB
// fills before the heap is measured again. Before, the mirror kept every
// byte (200 MB of output grew the heap by 222 MB).
func TestBrowserMemoryBounded(t *testing.T) {
	testenv.Volume(t)
	const (
		maxGrowth = 64 << 20 // from the start, xterm's scrollback included
		// Once xterm's scrollback is full, what grows with the volume. A mirror
		// that kept everything would grow by 2× the volume (UTF-16); a loaded
		// machine's renderer and GC leave up to ~30 MiB of noise (seen:
		// +9 to +29 MiB for 64 MiB; +3.5 MiB for 1 GiB on a quiet one).
		maxLaterGrowth = 40 << 20
	)
	mib := *browserMemoryMiB
	e := newEnv(t)
	p := e.newPage("memory")
	p.open("/")
	id := p.newTerminal()
	p.waitPrompt(id)
	atStart := p.heapUsed()
	p.output(id, 4, "warm")
	warm := p.heapUsed()

	start := time.Now()
	p.output(id, mib, "mem")
	took := time.Since(start)
	after := p.heapUsed()

	var kept int
	p.eval(fmt.Sprintf(`window.__termhost.client.confirmed('ahp-terminal:/' + %q).content.reduce((n, p) => n + (p.type === 'command' ? p.output : p.value).length, 0)`, id), &kept)
	t.Logf("%d MiB through one terminal in %s (%.1f MiB/s): JS heap %.1f MiB at start, %.1f after 4 MiB, %.1f after %d MiB more; mirror content %d KiB",
		mib, took.Round(time.Second), float64(mib)/took.Seconds(), mb(atStart), mb(warm), mb(after), mib, kept>>10)
	if kept > 1<<20 {
		t.Errorf("mirror keeps %d bytes of content, want ≤ 1 MiB (the server's scrollback)", kept)
	}
	if g := after - atStart; g > maxGrowth {
		t.Errorf("JS heap grew by %.1f MiB from the start, want < %.0f MiB", mb(g), mb(maxGrowth))
	}
	if g := after - warm; g > maxLaterGrowth {
		t.Errorf("JS heap grew by %.1f MiB during %d MiB of output, want < %.0f MiB", mb(g), mib, mb(maxLaterGrowth))
	}
}

// output runs a command in terminal id that prints mib MiB of 100-byte
// lines and then a marker, and waits until xterm.js has taken it all. The
// marker's quotes keep the echoed command line from matching it.
func (p *page) output(id string, mib int, marker string) {
	p.t.Helper()
	cmd := fmt.Sprintf(`yes "$(printf '%%099d' 0)" | head -c %d; echo; echo %s-''done`+"\r", mib<<20, marker)
	p.eval(fmt.Sprintf(`(window.__termhost.type(%q, %q), true)`, cmd, id), nil)
	p.waitJS(marker+" output", fmt.Sprintf(`(window.__termhost.buffer(%q) || '').includes(%q)`, id, marker+"-done"), time.Duration(2+mib/16)*time.Minute)
	p.eval(`window.__termhost.drained().then(() => true)`, nil)
}

// heapUsed is the page's JS heap in use after a full garbage collection.
func (p *page) heapUsed() float64 {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	if _, err := chromedp.Call(ctx, heapprofiler.CollectGarbage, cdp.Empty{}); err != nil {
		p.fail("collect garbage: %v", err)
	}
	u, err := chromedp.Call(ctx, cdpruntime.GetHeapUsage, cdp.Empty{})
	if err != nil {
		p.fail("heap usage: %v", err)
	}
	return u.UsedSize
}

func mb(bytes float64) float64 { return bytes / (1 << 20) }
