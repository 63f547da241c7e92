//go:build e2e

package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestLargePasteArrivesWhole: a paste of 2 MiB, twice what the server
// takes in one WebSocket message, reaches the program byte for byte: the
// page sends it in parts (assets/ahp/input.ts) and the server takes them
// at the pace the program reads (docs/protocol.md, "Input flow control").
// (Sent whole, it closed the connection and was lost.)
func TestLargePasteArrivesWhole(t *testing.T) {
	e := newEnv(t)
	p := e.newPage("tab")
	p.open("/")
	id := p.newTerminal()
	p.waitPrompt(id)
	const unit, times = "0123456789abcdef", (2 << 20) / 16
	// Raw input (no line editing, no 4 KiB line limit), normal output.
	p.typeKeys(id, fmt.Sprintf("stty raw -echo opost onlcr; echo RE''ADY; head -c %d | sha256sum; stty sane\r", len(unit)*times))
	p.waitLine(id, "READY", 15*time.Second)
	p.eval(fmt.Sprintf(`(window.__termhost.view(%q).term.paste(%q.repeat(%d)), true)`, id, unit, times), nil)
	sum := sha256.Sum256([]byte(strings.Repeat(unit, times)))
	p.waitLine(id, hex.EncodeToString(sum[:])+"  -", 2*time.Minute)
}
