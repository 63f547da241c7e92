package handlers_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
)

// TestChatlessSessionClaim: a session claim without chat,
// valid from a 0.8 client, reaches 1.x clients with the session URI as its
// chat in the catalogue, snapshots, terminal/claimed and replays (every frame
// checked against the 1.x schemas by the client's checkFrames); 1.x clients
// must send chat themselves (-32602, rejection), and can narrow the claim by
// echoing the chat they were shown.
func TestChatlessSessionClaim(t *testing.T) {
	const session = "ahp-session:/agent-1"
	ts := newServer(t)
	old := ts.dial(t)
	old.Initialize("0.8.0", "old")
	uri := ahp.TerminalURI("agent")
	old.MustCall("createTerminal", map[string]any{"channel": uri,
		"claim": map[string]any{"kind": "session", "session": session, "turnId": "t1", "toolCallId": "tc1"}})

	cur := ts.dial(t)
	welcome := cur.Initialize("1.1.0", "cur")
	if got := claimChats(t, welcome); len(got) != 1 || got[0] != session {
		t.Errorf("1.1 initialize catalogue claim chats = %v, want [%s]", got, session)
	}
	if st := cur.Subscribe(uri).State.(ahp.TerminalState); st.Claim.Chat != session {
		t.Errorf("1.1 snapshot claim = %+v, want chat %s", st.Claim, session)
	}
	if st := old.Subscribe(uri).State.(ahp.TerminalState); st.Claim.Chat != "" || st.Claim.TurnID != "t1" {
		t.Errorf("0.8 snapshot claim = %+v, want it as created (no chat)", st.Claim)
	}

	t.Run("1.x must send chat", func(t *testing.T) {
		e := cur.CallErr("createTerminal", map[string]any{"channel": ahp.TerminalURI("nochat"),
			"claim": map[string]any{"kind": "session", "session": session}}, ahp.CodeInvalidParams)
		if !strings.Contains(e.Message, "chat") {
			t.Errorf("createTerminal without chat: %q does not mention chat", e.Message)
		}
		cur.Dispatch(uri, map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "session", "session": session}})
		rej := cur.WaitAction("rejection", func(e ahp.Envelope) bool { return e.RejectionReason != "" })
		if !strings.Contains(rej.RejectionReason, "chat") {
			t.Errorf("chat-less terminal/claimed from 1.1: reason %q, want it to mention chat", rej.RejectionReason)
		}
	})

	// While the 1.1 client is away, the 0.8 client detaches the terminal
	// from its tool call; the 1.1 client gets that in its replay.
	seen := cur.LastSeq()
	_ = cur.Conn().CloseNow()
	cur.WaitClosed()
	old.Dispatch(uri, map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "session", "session": session}})
	old.WaitAction("narrowed catalogue", func(e ahp.Envelope) bool {
		return e.Action.Type == ahp.RootTerminalsChanged && len(e.Action.Terminals) == 1 && e.Action.Terminals[0].Claim.TurnID == ""
	})

	back := ts.dial(t)
	res := back.MustCall("reconnect", map[string]any{"channel": ahp.RootURI, "clientId": "cur",
		"lastSeenServerSeq": seen, "subscriptions": []string{ahp.RootURI, uri}})
	var replay ahp.ReplayResult
	if err := json.Unmarshal(res, &replay); err != nil {
		t.Fatalf("reconnect result %s: %v", res, err)
	}
	claims := 0
	for _, e := range replay.Actions {
		var got []ahp.Claim
		switch e.Action.Type {
		case ahp.TerminalClaimed:
			got = []ahp.Claim{e.Action.Claim}
		case ahp.RootTerminalsChanged:
			for _, info := range e.Action.Terminals {
				got = append(got, info.Claim)
			}
		}
		for _, c := range got {
			claims++
			if c.Chat != session || c.TurnID != "" {
				t.Errorf("replayed %s claim = %+v, want the narrowed claim with chat %s", e.Action.Type, c, session)
			}
		}
	}
	if claims < 2 {
		t.Errorf("replay %s holds %d claims, want terminal/claimed and the catalogue", res, claims)
	}

	// The 1.1 client narrows with the chat it was shown.
	back.Dispatch(uri, map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "session", "session": session, "chat": session}})
	if e := back.WaitAction("own claim", func(e ahp.Envelope) bool { return e.Action.Type == ahp.TerminalClaimed }); e.RejectionReason != "" {
		t.Errorf("1.1 narrowing with the shown chat rejected: %s", e.RejectionReason)
	}
}

// claimChats lists the chat of every catalogue claim in an initialize result.
func claimChats(t *testing.T, welcome map[string]any) []string {
	t.Helper()
	b, _ := json.Marshal(welcome)
	var r struct {
		Snapshots []struct {
			State struct {
				Terminals []struct {
					Claim struct {
						Chat string `json:"chat"`
					} `json:"claim"`
				} `json:"terminals"`
			} `json:"state"`
		} `json:"snapshots"`
	}
	if err := json.Unmarshal(b, &r); err != nil || len(r.Snapshots) == 0 {
		t.Fatalf("initialize result %s: %v", b, err)
	}
	var chats []string
	for _, info := range r.Snapshots[0].State.Terminals {
		chats = append(chats, info.Claim.Chat)
	}
	return chats
}

// TestAgentNeverTakesFromAPerson: an agent's connection (termhost mcp,
// owner-authenticated) may hand its own session claim around, but a claim
// change of its that arrives after a person took the terminal over is
// refused: the person keeps control. Before the fix the owner's override
// let the agent's late narrowing take the terminal back.
func TestAgentNeverTakesFromAPerson(t *testing.T) {
	const session = "ahp-session:/agent-late"
	ts := newServer(t)
	agent := ts.dial(t)
	agent.MustCall(ahp.MethodInitialize, map[string]any{"channel": ahp.RootURI, "protocolVersions": []string{"0.8.0"},
		"clientId": "agent", "initialSubscriptions": []string{ahp.RootURI}, "clientInfo": map[string]any{"name": "termhost-mcp", "title": "Claude Code"}})
	uri := ahp.TerminalURI("agent-build")
	bound := map[string]any{"kind": "session", "session": session, "turnId": "turn-1", "toolCallId": "call-1"}
	agent.MustCall(ahp.MethodCreateTerminal, map[string]any{"channel": uri, "claim": bound})
	agent.Subscribe(uri)

	person := ts.dial(t)
	person.Initialize("0.8.0", "person")
	person.Subscribe(uri)
	person.Dispatch(uri, map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "client", "clientId": "person"}})
	person.WaitAction("person takes control", func(e ahp.Envelope) bool {
		return e.Action.Type == ahp.TerminalClaimed && e.Action.Claim.ClientID == "person" && e.RejectionReason == ""
	})

	// The agent's tool call returns and it narrows "its" claim: too late.
	agent.Dispatch(uri, map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "session", "session": session}})
	rej := agent.WaitAction("late narrowing refused", func(e ahp.Envelope) bool {
		return e.Action.Type == ahp.TerminalClaimed && e.RejectionReason != ""
	})
	if !strings.Contains(rej.RejectionReason, "person holds this terminal") {
		t.Errorf("rejection reason %q, want it to say a person holds the terminal", rej.RejectionReason)
	}
	if st := person.Subscribe(uri).State.(ahp.TerminalState); st.Claim.Kind != ahp.ClaimClient || st.Claim.ClientID != "person" {
		t.Errorf("claim after the agent's late narrowing = %+v, want the person's", st.Claim)
	}

	// The owner's own connections (not an agent) still take control at will.
	owner := ts.dial(t)
	owner.Initialize("0.8.0", "owner-tab")
	owner.Subscribe(uri)
	owner.Dispatch(uri, map[string]any{"type": "terminal/claimed", "claim": map[string]any{"kind": "client", "clientId": "owner-tab"}})
	owner.WaitAction("owner takes control", func(e ahp.Envelope) bool {
		return e.Action.Type == ahp.TerminalClaimed && e.Action.Claim.ClientID == "owner-tab" && e.RejectionReason == ""
	})
}
