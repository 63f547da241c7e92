package terminals

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
)

// viewer is a recorder that may never act (a viewer link).
type viewer struct{ *recorder }

func (viewer) ViewOnly() bool { return true }

// TestDispatchChecks: what each dispatch becomes, by role, claim and state.
// Rejections go to the dispatcher with a reason; nothing is counted here
// (the Outcome tells the caller).
func TestDispatchChecks(t *testing.T) {
	m := testManager(t, Config{})
	defer m.Close()
	uri := "ahp-terminal:/checks"
	claim := ahp.ClientClaim("holder")
	if err := m.Create(ahp.CreateTerminalParams{Channel: uri, Claim: &claim}); err != nil {
		t.Fatal(err)
	}
	m.Connected("holder")
	defer m.ConnectionLost("holder")
	refuseAll := Policy{Refuse: func(ahp.Action) string { return "view only" }}
	cases := []struct {
		name    string
		sub     Subscriber
		uri     string
		action  ahp.Action
		policy  Policy
		want    Outcome
		reason  string // in the rejection envelope
		visible bool   // the envelope reaches the dispatcher
	}{
		{"holder types", newRecorder("holder"), uri, input(t, "true\r"), Policy{}, Accepted, "", true},
		{"role refuses", newRecorder("v"), uri, input(t, "x"), refuseAll, RefusedByRole, "view only", true},
		{"other resizes", newRecorder("other"), uri, ahp.Action{Type: ahp.TerminalResized, Cols: 90, Rows: 20}, Policy{}, Rejected, "only the claim holder can resize", true},
		{"other types", newRecorder("other"), uri, input(t, "x"), Policy{}, Rejected, "only the claim holder can type", true},
		{"owner types without the claim", newRecorder("owner"), uri, input(t, "x"), Policy{TakeClaim: true}, Rejected, "only the claim holder can type", true},
		{"holder resizes", newRecorder("holder"), uri, ahp.Action{Type: ahp.TerminalResized, Cols: 90, Rows: 20}, Policy{}, Accepted, "", true},
		{"bad size", newRecorder("holder"), uri, ahp.Action{Type: ahp.TerminalResized, Cols: 0, Rows: 20}, Policy{}, Rejected, "cols and rows must be between", true},
		{"other claims", newRecorder("other"), uri, ahp.Action{Type: ahp.TerminalClaimed, Claim: ahp.ClientClaim("other")}, Policy{}, Rejected, "claimed by another client", true},
		{"viewer with the holder's id claims", viewer{newRecorder("holder")}, uri, ahp.Action{Type: ahp.TerminalClaimed, Claim: ahp.ClientClaim("holder")}, Policy{}, Rejected, "claimed by another client", true},
		{"server-only action", newRecorder("holder"), uri, ahp.Action{Type: ahp.TerminalExited}, Policy{}, Rejected, "cannot be dispatched by clients", true},
		{"root action", newRecorder("holder"), ahp.RootURI, ahp.Action{Type: ahp.TerminalCleared}, Policy{}, Rejected, "is not a root action", true},
		{"root config", newRecorder("holder"), ahp.RootURI, ahp.Action{Type: ahp.RootConfigChanged}, Policy{}, Rejected, "no configuration", true},
		{"config on a terminal", newRecorder("holder"), uri, ahp.Action{Type: ahp.RootConfigChanged}, Policy{}, Rejected, "belongs to", true},
		{"unknown terminal", newRecorder("holder"), "ahp-terminal:/none", input(t, "x"), Policy{}, Dropped, "", false},
		{"overlong channel", newRecorder("holder"), "ahp-terminal:/" + strings.Repeat("x", ahp.MaxURI), input(t, "x"), Policy{}, Rejected, "channel", true},
		{"owner takes the claim", newRecorder("owner"), uri, ahp.Action{Type: ahp.TerminalClaimed, Claim: ahp.ClientClaim("owner")}, Policy{TakeClaim: true}, Accepted, "", true},
		{"anyone takes a gone client's claim", newRecorder("late"), uri, ahp.Action{Type: ahp.TerminalClaimed, Claim: ahp.ClientClaim("late")}, Policy{}, Accepted, "", true},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			origin := ahp.Origin{ClientID: tc.sub.ClientID(), ClientSeq: int64(i + 1)}
			m.Initialize(tc.sub, []string{tc.uri}) // accepted actions reach the channel's subscribers
			if got := m.Dispatch(tc.sub, origin, tc.uri, tc.action, tc.policy); got != tc.want {
				t.Errorf("Dispatch(%s) = %v, want %v", tc.action.Type, got, tc.want)
			}
			rec := recorderOf(tc.sub)
			frames := rec.all()
			if got := len(frames) > 0; got != tc.visible {
				t.Fatalf("dispatcher got frames %q, want some: %v", frames, tc.visible)
			}
			if tc.reason != "" && !strings.Contains(frames, tc.reason) {
				t.Errorf("rejection %q, want one containing %q", frames, tc.reason)
			}
			if tc.want == Accepted && strings.Contains(frames, "rejectionReason") {
				t.Errorf("accepted action answered with %q", frames)
			}
		})
	}
}

func recorderOf(s Subscriber) *recorder {
	if v, ok := s.(viewer); ok {
		return v.recorder
	}
	return s.(*recorder)
}

func (r *recorder) all() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.frames, "\n")
}

// TestRenamePinsTitle: a client's rename wins over the titles the shell
// sets, until the client clears it; the catalogue follows.
func TestRenamePinsTitle(t *testing.T) {
	m := testManager(t, Config{})
	defer m.Close()
	uri := "ahp-terminal:/pin"
	rec := claimedTerminal(t, m, uri)
	m.Dispatch(rec, ahp.Origin{ClientID: "me", ClientSeq: 1}, uri, ahp.Action{Type: ahp.TerminalTitleChanged, Title: "pinned"}, Policy{})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	m.Dispatch(rec, ahp.Origin{ClientID: "me", ClientSeq: 2}, uri, input(t, `printf '\033]2;shell\007'; echo DO''NE`+"\r"), Policy{})
	if err := rec.waitFor(ctx, "DONE"); err != nil {
		t.Fatal(err)
	}
	if got := m.Terminals()[0].Title; got != "pinned" {
		t.Errorf("title after the shell set one = %q, want the pinned %q", got, "pinned")
	}
}

// TestManagerErrors: Create and Dispose refuse what they cannot do, with
// the sentinels handlers map to JSON-RPC codes.
func TestManagerErrors(t *testing.T) {
	m := testManager(t, Config{MaxTerminals: 1})
	defer m.Close()
	claim := ahp.ClientClaim("me")
	create := func(uri string, meta string) error {
		p := ahp.CreateTerminalParams{Channel: uri, Claim: &claim}
		if meta != "" {
			p.Meta = []byte(meta)
		}
		return m.Create(p)
	}
	if err := create("ahp-terminal:/a", ""); err != nil {
		t.Fatal(err)
	}
	var startErr *StartError
	cases := []struct {
		name string
		err  error
		want func(error) bool
	}{
		{"exists", create("ahp-terminal:/a", ""), func(e error) bool { return errors.Is(e, ErrExists) }},
		{"limit", create("ahp-terminal:/b", ""), func(e error) bool { return errors.Is(e, ErrLimit) }},
		{"dispose unknown", m.Dispose("ahp-terminal:/none"), func(e error) bool { return errors.Is(e, ErrNotFound) }},
		{"invalid params", m.Create(ahp.CreateTerminalParams{Channel: "x"}), func(e error) bool { return errors.Is(e, ErrInvalid) }},
	}
	if err := m.Dispose("ahp-terminal:/a"); err != nil {
		t.Fatal(err)
	}
	cases = append(cases,
		struct {
			name string
			err  error
			want func(error) bool
		}{"bad command meta", create("ahp-terminal:/c", `{"termhost/command": []}`), func(e error) bool { return errors.Is(e, ErrInvalid) }},
		struct {
			name string
			err  error
			want func(error) bool
		}{"program cannot start", create("ahp-terminal:/d", `{"termhost/command": ["/nonexistent/prog"]}`), func(e error) bool {
			// The client's mistake (-32602), saying which program and why.
			return errors.As(e, &startErr) && startErr.Program == "/nonexistent/prog" && errors.Is(e, ErrInvalid) &&
				strings.Contains(e.Error(), `command "/nonexistent/prog" not found`)
		}},
	)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.want(tc.err) {
				t.Errorf("got %v", tc.err)
			}
		})
	}
	if m.Exists("ahp-terminal:/a") || len(m.Terminals()) != 0 {
		t.Errorf("after dispose and failed creates: Exists = %v, %d terminals, want none", m.Exists("ahp-terminal:/a"), len(m.Terminals()))
	}
}

// TestPresence: one count of live connections per clientId.
func TestPresence(t *testing.T) {
	m := testManager(t, Config{})
	defer m.Close()
	m.Connected("a")
	m.Connected("a")
	if n := m.ConnectionLost("a"); n != 1 {
		t.Errorf("ConnectionLost = %d left, want 1", n)
	}
	if n := m.Connections("a"); n != 1 {
		t.Errorf("Connections = %d, want 1", n)
	}
	if n := m.ConnectionLost("a"); n != 0 || m.Connections("a") != 0 {
		t.Errorf("after the last disconnect: %d left, want 0", n)
	}
}
