package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/vt"
	"github.com/coder/websocket"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/internal/testenv"
	"github.com/termhost/termhost/terminals"
)

// screenViewer is a raw WebSocket subscriber that keeps what a client
// writes into its terminal: the snapshot's content, then each terminal/data
// in order. It checks that serverSeq only grows, that every skip notice
// is followed by the redraw at the serverSeq it names, and that no two
// frames carry the same channel and serverSeq in their params, whatever
// their method (a harness that reads them from every frame would see
// serverSeq repeat on the connection). Its screen is drawn
// at the end (screen), from a point where the stream alone decides it:
// emulating every byte of a flood under the race detector takes minutes.
type screenViewer struct {
	t          *testing.T
	ws         *websocket.Conn
	uri        string
	cols, rows int

	mu      sync.Mutex
	changed chan struct{} // a frame was applied
	last    int64         // serverSeq of the last action applied
	out     strings.Builder
	redrawn int // where in out the last skip's redraw starts, or -1
	skips   []ext.SkipNotice
	redraws [][2]int         // where in out each skip's redraw is
	at      map[int64]int    // the length of out after each serverSeq
	carried map[seqOf]string // the method of the frame whose params carried each pair
	err     error
}

// seqOf is a channel and serverSeq pair in a frame's params.
type seqOf struct {
	channel string
	seq     int64
}

func newScreenViewer(t *testing.T, ws *websocket.Conn, uri string) *screenViewer {
	return &screenViewer{t: t, ws: ws, uri: uri, changed: make(chan struct{}, 1), redrawn: -1, at: map[int64]int{}, carried: map[seqOf]string{}}
}

// subscribed reads until the subscribe answer (id 2) and sets up the
// emulator from its snapshot.
func (v *screenViewer) subscribed(ctx context.Context) {
	v.t.Helper()
	for {
		_, frame, err := v.ws.Read(ctx)
		if err != nil {
			v.t.Fatalf("waiting for the subscribe answer: %v", err)
		}
		var m struct {
			ID     int `json:"id"`
			Result struct {
				Snapshot ahp.Snapshot `json:"snapshot"`
			} `json:"result"`
		}
		if err := json.Unmarshal(frame, &m); err != nil || m.ID != 2 {
			continue
		}
		st := m.Result.Snapshot.State.(ahp.TerminalState)
		v.cols, v.rows, v.last = st.Cols, st.Rows, m.Result.Snapshot.FromSeq
		for _, p := range st.Content {
			v.out.WriteString(p.Text())
		}
		return
	}
}

// read applies frames until the socket closes, ctx ends or a frame is
// wrong (v.err says why).
func (v *screenViewer) read(ctx context.Context) {
	defer v.wake() // reached sees the error
	var pending *ext.SkipNotice
	for {
		_, frame, err := v.ws.Read(ctx)
		if err != nil {
			v.fail(err)
			return
		}
		var m struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		env, fast := ahp.DecodeDataFrame(frame) // the output frames; the rest the general way
		if fast {
			m.Method = "action"
		} else if json.Unmarshal(frame, &m) != nil {
			continue
		}
		if err := v.carry(m.Method, m.Params, env, fast); err != nil {
			v.fail(err)
			return
		}
		switch m.Method {
		case ext.NotifySkipped:
			var n ext.SkipNotice
			if err := json.Unmarshal(m.Params, &n); err != nil || n.Channel != v.uri || n.Bytes <= 0 {
				v.fail(fmt.Errorf("bad skip notice %s (%v)", m.Params, err))
				return
			}
			pending = &n
		case "action":
			if !fast {
				if err := json.Unmarshal(m.Params, &env); err != nil {
					v.fail(err)
					return
				}
			}
			if env.Channel != v.uri {
				continue
			}
			v.mu.Lock()
			switch {
			case env.ServerSeq <= v.last:
				v.err = fmt.Errorf("serverSeq %d after %d", env.ServerSeq, v.last)
			case pending != nil && (env.ServerSeq != pending.RedrawSeq || env.Action.Type != ahp.TerminalData):
				v.err = fmt.Errorf("skip notice naming %d followed by %s at %d", pending.RedrawSeq, env.Action.Type, env.ServerSeq)
			}
			if v.err != nil {
				v.mu.Unlock()
				return
			}
			if pending != nil {
				v.skips = append(v.skips, *pending)
				v.redrawn = v.out.Len()
				v.redraws = append(v.redraws, [2]int{v.out.Len(), v.out.Len() + len(env.Action.Data)})
				pending = nil
			}
			v.last = env.ServerSeq
			if env.Action.Type == ahp.TerminalData {
				v.out.WriteString(env.Action.Data)
			}
			v.at[env.ServerSeq] = v.out.Len()
			v.mu.Unlock()
			v.wake()
		}
	}
}

// wake tells reached to look again.
func (v *screenViewer) wake() {
	select {
	case v.changed <- struct{}{}:
	default:
	}
}

// carry records the channel and serverSeq a frame's params carry, if any
// (an output frame's are env's): a pair carried twice is an error.
func (v *screenViewer) carry(method string, params json.RawMessage, env ahp.Envelope, fast bool) error {
	k := seqOf{env.Channel, env.ServerSeq}
	if !fast {
		var p struct {
			Channel   string `json:"channel"`
			ServerSeq *int64 `json:"serverSeq"`
		}
		if json.Unmarshal(params, &p) != nil || p.Channel == "" || p.ServerSeq == nil {
			return nil // params of another shape, or without the pair
		}
		k = seqOf{p.Channel, *p.ServerSeq}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if first, ok := v.carried[k]; ok {
		return fmt.Errorf("a %q frame carries channel %s, serverSeq %d in its params, as a %q frame did before it", method, k.channel, k.seq, first)
	}
	v.carried[k] = method
	return nil
}

func (v *screenViewer) fail(err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.err == nil {
		v.err = err
	}
}

// reached waits until the viewer has applied serverSeq seq.
func (v *screenViewer) reached(ctx context.Context, seq int64) error {
	for {
		v.mu.Lock()
		last, err := v.last, v.err
		v.mu.Unlock()
		switch {
		case err != nil:
			return err
		case last >= seq:
			return nil
		}
		select {
		case <-v.changed:
		case <-ctx.Done():
			return fmt.Errorf("at serverSeq %d, waiting for %d: %w", last, seq, ctx.Err())
		}
	}
}

// ends reports whether the output so far ends with end.
func (v *screenViewer) ends(end string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return strings.HasSuffix(v.out.String(), end)
}

// bytes is the output received (redraws included).
func (v *screenViewer) bytes() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.out.Len()
}

// screen draws the output into a vt emulator from the last point that
// alone decides the screen: the last skip's redraw, which draws the whole
// screen on any terminal, or a line start tail bytes from the end, when
// later (the flood's lines each reset their colours and end in a newline,
// and more than a screenful of them follow).
func (v *screenViewer) screen(tail int) *vt.Emulator {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.screenOf(v.out.String(), v.redrawn, tail)
}

// screenAt is the screen once serverSeq seq was applied, as screen draws it.
func (v *screenViewer) screenAt(seq int64, tail int) (*vt.Emulator, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	n, ok := v.at[seq]
	if !ok {
		return nil, false
	}
	return v.screenOf(v.out.String()[:n], -1, tail), true
}

// redrawScreens draws each skip's redraw alone, on a blank terminal.
func (v *screenViewer) redrawScreens() map[int64]*vt.Emulator {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := v.out.String()
	screens := map[int64]*vt.Emulator{}
	for i, r := range v.redraws {
		emu := vt.NewEmulator(v.cols, v.rows)
		_, _ = emu.WriteString(out[r[0]:r[1]])
		screens[v.skips[i].RedrawSeq] = emu
	}
	return screens
}

func (v *screenViewer) screenOf(out string, from, tail int) *vt.Emulator {
	if len(out) > tail {
		if nl := strings.IndexByte(out[len(out)-tail:], '\n'); nl >= 0 && len(out)-tail+nl+1 > from {
			from = len(out) - tail + nl + 1
		}
	}
	emu := vt.NewEmulator(v.cols, v.rows)
	_, _ = emu.WriteString(out[max(from, 0):])
	return emu
}

// screenDiff compares two screens cell for cell (attributes included) and
// their cursors; "" if equal.
func screenDiff(want, got *vt.Emulator) string {
	if w, g := want.CursorPosition(), got.CursorPosition(); w != g {
		return fmt.Sprintf("cursor at %v, want %v", g, w)
	}
	for y := range want.Height() {
		for x := range want.Width() {
			if w, g := want.CellAt(x, y), got.CellAt(x, y); !w.Equal(g) {
				return fmt.Sprintf("cell %d,%d: got %+v, want %+v", x, y, g, w)
			}
		}
	}
	return ""
}

// screenText is a screen's text, for messages.
func screenText(e *vt.Emulator) string {
	var lines []string
	for y := range e.Height() {
		var b strings.Builder
		for x := range e.Width() {
			if c := e.CellAt(x, y); c != nil {
				b.WriteString(c.Content)
			}
		}
		lines = append(lines, strings.TrimRight(b.String(), " "))
	}
	return strings.Join(lines, "\n")
}

// TestSlowViewersSkipAhead: ten viewers that decode and
// draw every frame, and one that stops reading, watch a flood. Nobody is
// cut off: whoever falls behind skips ahead to the screen, and once the
// flood ends every viewer's screen equals the claim holder's, which got
// every byte, cell for cell.
func TestSlowViewersSkipAhead(t *testing.T) {
	testenv.Volume(t)
	ts := newServer(t, func(_ *terminals.Config, hc *handlersConfig) {
		hc.SendQueue, hc.PingInterval, hc.WriteTimeout = 4<<20, noPings, time.Hour
	})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	driver := ts.dial(t)
	driver.Initialize("1.0.0", "driver")
	uri, _ := driver.CreateTerminal("flood", "driver", nil)
	driver.Notify("unsubscribe", map[string]any{"channel": uri})

	holder := newScreenViewer(t, rawSubscriber(t, ts, "driver", uri), uri) // paces the shell: gets every byte
	holder.subscribed(ctx)
	// Ten viewers decoding every frame share the cores with the server.
	n := 10
	var viewers []*screenViewer
	for i := range n {
		v := newScreenViewer(t, rawSubscriber(t, ts, fmt.Sprintf("viewer-%d", i), uri), uri)
		v.subscribed(ctx)
		viewers = append(viewers, v)
	}
	stalled := newScreenViewer(t, rawSubscriber(t, ts, "stalled", uri, smallBuffers), uri)
	stalled.subscribed(ctx)

	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for _, v := range append([]*screenViewer{holder}, viewers...) {
		wg.Add(1)
		go func() { defer wg.Done(); v.read(ctx) }()
	}
	// 15 MiB: more than the stalled viewer's queue (4 MiB) and socket
	// buffers. `read` keeps the shell from printing a prompt after DONE:
	// the stream ends there.
	const lines = 1 << 18
	driver.Dispatch(uri, map[string]any{"type": "terminal/input",
		"data": fmt.Sprintf(mixedAwk, lines) + "; echo; echo DO''NE; read -r _\r"})
	for !holder.ends("DONE\r\n") {
		select {
		case <-holder.changed:
		case <-ctx.Done():
			t.Fatalf("the flood did not end: the holder has %d bytes", holder.bytes())
		}
	}
	holder.mu.Lock()
	end, got := holder.last, holder.out.Len()
	holder.mu.Unlock()
	if want := lines * len(mixedLines(1)); got < want {
		t.Fatalf("the holder got %d bytes, want all %d", got, want)
	}

	wg.Add(1)
	go func() { defer wg.Done(); stalled.read(ctx) }()
	const tail = 64 << 10
	want := holder.screen(tail)
	for i, v := range append(viewers, stalled) {
		if err := v.reached(ctx, end); err != nil {
			t.Fatalf("viewer %d: %v", i, err)
		}
		if got := v.screen(tail); screenDiff(want, got) != "" {
			t.Errorf("viewer %d (%d bytes, %d skips): %s\nscreen:\n%s\nwant:\n%s", i, v.bytes(), len(v.skips), screenDiff(want, got), screenText(got), screenText(want))
		}
	}
	// Each redraw alone is the screen the holder had at its serverSeq.
	for i, v := range append(viewers, stalled) {
		for seq, got := range v.redrawScreens() {
			want, ok := holder.screenAt(seq, tail)
			if !ok {
				t.Errorf("viewer %d: a skip at serverSeq %d, which the holder never got", i, seq)
				continue
			}
			if diff := screenDiff(want, got); diff != "" {
				t.Errorf("viewer %d: the redraw of the skip at %d: %s\nscreen:\n%s\nwant:\n%s", i, seq, diff, screenText(got), screenText(want))
			}
		}
	}
	if len(stalled.skips) == 0 {
		t.Errorf("the stalled viewer got all %d bytes without skipping: the test proves nothing", stalled.bytes())
	}
	if n := ts.metric(t, "termhost_slow_client_evictions_total"); n != 0 {
		t.Errorf("%v connections evicted, want none", n)
	}
	if n := ts.metric(t, "termhost_slow_client_skips_total"); n < float64(len(stalled.skips)) {
		t.Errorf("skips metric %v, want at least the stalled viewer's %d", n, len(stalled.skips))
	}
	skipped := 0
	for _, v := range append(viewers, stalled) {
		skipped += len(v.skips)
	}
	t.Logf("flood of %d bytes; stalled viewer got %d bytes in %d skips; %d skips in all", got, stalled.bytes(), len(stalled.skips), skipped)
}

// TestSkipNoticeCarriesNoServerSeq: of the frames of a skip ahead, only the
// redraw's terminal/data envelope carries a serverSeq; the notice names it
// as redrawSeq. A harness that reads channel and serverSeq from every
// frame's params, whatever the method, sees each pair once, and serverSeq
// strictly grows on the connection (the viewer's read checks both).
func TestSkipNoticeCarriesNoServerSeq(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(_ *terminals.Config, hc *handlersConfig) {
		hc.SendQueue, hc.PingInterval, hc.WriteTimeout = 1<<20, noPings, time.Hour
	})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	driver := ts.dial(t)
	driver.Initialize("1.0.0", "driver")
	uri, _ := driver.CreateTerminal("flood", "driver", nil)
	driver.Notify("unsubscribe", map[string]any{"channel": uri})

	holder := newScreenViewer(t, rawSubscriber(t, ts, "driver", uri), uri) // paces the shell: gets every byte
	holder.subscribed(ctx)
	stalled := newScreenViewer(t, rawSubscriber(t, ts, "stalled", uri, smallBuffers), uri)
	stalled.subscribed(ctx)

	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Add(1)
	go func() { defer wg.Done(); holder.read(ctx) }()
	// 8 MiB: more than the stalled viewer's queue (1 MiB) and socket
	// buffers. `read` keeps the shell from printing a prompt after DONE.
	const lines = 1 << 17
	driver.Dispatch(uri, map[string]any{"type": "terminal/input",
		"data": fmt.Sprintf(mixedAwk, lines) + "; echo; echo DO''NE; read -r _\r"})
	for !holder.ends("DONE\r\n") {
		select {
		case <-holder.changed:
		case <-ctx.Done():
			t.Fatalf("the flood did not end: the holder has %d bytes", holder.bytes())
		}
	}
	holder.mu.Lock()
	end := holder.last
	holder.mu.Unlock()

	wg.Add(1)
	go func() { defer wg.Done(); stalled.read(ctx) }()
	if err := stalled.reached(ctx, end); err != nil {
		t.Fatalf("stalled viewer: %v", err)
	}
	stalled.mu.Lock()
	defer stalled.mu.Unlock()
	if len(stalled.skips) == 0 {
		t.Fatalf("the stalled viewer got all %d bytes without skipping: the test proves nothing", stalled.out.Len())
	}
	t.Logf("stalled viewer: %d skips, %d frames with a serverSeq", len(stalled.skips), len(stalled.carried))
}
