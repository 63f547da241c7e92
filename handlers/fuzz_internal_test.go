package handlers

import (
	"encoding/json"
	"log/slog"
	"os"
	"testing"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/handlers/auth"
	"github.com/termhost/termhost/terminals"
)

// FuzzHandleFrame feeds arbitrary frames to one connection's JSON-RPC
// handler, on top of a real manager with one real terminal. Every frame must
// give a JSON-RPC error or a valid effect: each request (an id and a method)
// gets exactly one response carrying its id, everything sent is valid JSON,
// nothing panics, and the connection still answers ping afterwards.
func FuzzHandleFrame(f *testing.F) {
	var hooks Hooks
	m, err := terminals.NewManager(terminals.Config{Shell: "/bin/cat", MaxTerminals: 3, DisposeGrace: 100e6,
		Env: []string{"PATH=" + os.Getenv("PATH")}, Hooks: hooks.Manager()})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(m.Close)
	s, err := New(Config{Manager: m, Hooks: &hooks, NoAuth: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(s.Close)
	claim := ahp.ClientClaim("fuzz")
	if err := m.Create(ahp.CreateTerminalParams{Channel: "ahp-terminal:/f", Claim: &claim}); err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"channel":"ahp-root://"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"subscribe","params":{"channel":"ahp-terminal:/f"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"createTerminal","params":{"channel":"ahp-terminal:/g","claim":{"kind":"client","clientId":"x"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"disposeTerminal","params":{"channel":"ahp-terminal:/g"}}`,
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/f","clientSeq":1,"action":{"type":"terminal/resized","cols":5,"rows":5}}}`,
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-terminal:/f","clientSeq":2,"action":{"type":"terminal/claimed","claim":{"kind":"session","session":"s"}}}}`,
		`{"jsonrpc":"2.0","id":"x","method":"reconnect","params":{"channel":"ahp-root://","clientId":"fuzz","subscriptions":[{"channel":"ahp-root://","lastSeenServerSeq":1}]}}`,
		`{"jsonrpc":"2.0","id":5,"method":"x-share/create","params":{"channel":"ahp-root://","terminal":"ahp-terminal:/f","role":"viewer"}}`,
		`{"jsonrpc":"2.0","id":6,"method":"unknown"}`, `[1,2]`, `{`, `null`, `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"channel":"ahp-root://","protocolVersions":["9.9.9"],"clientId":"c"}}`,
	} {
		f.Add([]byte(seed))
	}
	initFrame := []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"channel":"ahp-root://","protocolVersions":["0.8.0","1.0.0"],"clientId":"fuzz"}}`)
	f.Fuzz(func(t *testing.T, frame []byte) {
		c := newConn(s, nil, "fuzz")
		c.writer.Stop() // no socket: the test takes the queue itself
		c.role = auth.RoleOwner
		defer m.UnsubscribeAll(c)
		if c.handle(initFrame) != nil {
			t.Fatal("initialize failed")
		}
		c.takeQueue()
		stop := c.handle(frame)
		var in ahp.Message
		isRequest := json.Unmarshal(frame, &in) == nil && in.Method != "" && in.ID != nil
		responses := 0
		for _, out := range c.takeQueue() {
			var msg ahp.Message
			if err := json.Unmarshal(out, &msg); err != nil {
				t.Fatalf("invalid JSON sent for %q: %v: %s", frame, err, out)
			}
			if msg.Method == "" {
				responses++
				if isRequest && string(msg.ID) != string(in.ID) && string(msg.ID) != "null" {
					t.Fatalf("response id %s for request id %s", msg.ID, in.ID)
				}
			}
		}
		if isRequest && responses != 1 {
			t.Fatalf("%d responses to request %q", responses, frame)
		}
		if stop != nil {
			return // -32005: the connection ends, by design
		}
		c.nextPing(t)
		if in.Method == "disposeTerminal" || in.Method == "createTerminal" {
			// Keep the world small: only the seed terminal survives.
			for _, ti := range m.Terminals() {
				if ti.Resource != "ahp-terminal:/f" {
					_ = m.Dispose(ti.Resource)
				}
			}
			if !m.Exists("ahp-terminal:/f") {
				_ = m.Create(ahp.CreateTerminalParams{Channel: "ahp-terminal:/f", Claim: &claim})
			}
		}
	})
}

// takeQueue returns and clears what the connection queued (no writer runs).
func (c *conn) takeQueue() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	var q [][]byte
	for _, f := range c.queue {
		if f.env != nil {
			q = append(q, f.env.Bytes(c.shape))
		} else {
			q = append(q, f.raw)
		}
	}
	c.queue, c.queued = nil, 0
	return q
}

func (c *conn) nextPing(t *testing.T) {
	if c.handle([]byte(`{"jsonrpc":"2.0","id":"p","method":"ping","params":{"channel":"ahp-root://"}}`)) != nil {
		t.Fatal("ping ended the connection")
	}
	for _, out := range c.takeQueue() {
		if string(out) == `{"jsonrpc":"2.0","id":"p","result":null}` {
			return
		}
	}
	t.Fatal("no answer to ping after the frame")
}
