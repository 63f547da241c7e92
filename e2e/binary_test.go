//go:build e2e

package e2e

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestOutputAsBinary: the workbench asks for terminal
// output as binary WebSocket messages; coloured output, decoded from them,
// draws as colour (no escape shows as text) and text typed after it still
// works.
func TestOutputAsBinary(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.newPage("binary")
	var mu sync.Mutex
	var binary, text int
	if err := chromedp.Listen(p.ctx, func(ev any) {
		if f, ok := ev.(*network.EventWebSocketFrameReceived); ok && f.Response != nil {
			mu.Lock()
			defer mu.Unlock()
			if f.Response.Opcode == 2 {
				binary++
			} else {
				text++
			}
		}
	}); err != nil {
		p.fail("listen to network events: %v", err)
	}
	p.open("/")
	id := p.newTerminal()
	p.typeKeys(id, `printf '\033[32m%s\033[0m %s\n' gre''en-$((40+2)) 世界`+kb.Enter)
	p.waitLine(id, "green-42 世界", 10*time.Second)
	for _, l := range p.lines(id) {
		if !strings.Contains(l, "printf") && strings.Contains(l, "[") {
			p.fail("an escape sequence shows as text: %q", l)
		}
	}
	var fg int
	p.eval(`(() => { const b = window.__termhost.view(`+strconv.Quote(id)+`).term.buffer.active;
		for (let y = 0; y < b.length; y++) { const l = b.getLine(y); if (l && l.translateToString(true).startsWith('green-42')) return l.getCell(0).getFgColor(); }
		return -1; })()`, &fg)
	if fg != 2 {
		p.fail("green-42 is drawn in colour %d, want 2 (green)", fg)
	}
	mu.Lock()
	b, tx := binary, text
	mu.Unlock()
	if b == 0 || tx == 0 {
		p.fail("WebSocket messages received: %d binary, %d text; want output as binary and the rest as text", b, tx)
	}
}
