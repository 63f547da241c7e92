package terminals

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/terminals/recording"
)

// TestAgentCommandsMarked: a command started while an agent's
// tool call holds the terminal (a session claim with a toolCallId) carries
// the agent's mark in terminal/commandExecuted, in a later snapshot's _meta
// (not in the command part: AHP's reducer makes none) and in the
// recording's marker; one started once the claim is narrowed does not.
// The catalogue names the agent session, for the owner's hand-back.
func TestAgentCommandsMarked(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "recordings")
	m := testManager(t, Config{Shell: "/bin/bash", ShellIntegration: true, RecordDir: dir, DisposeGrace: 100 * time.Millisecond})
	defer m.Close()
	uri := "ahp-terminal:/agent1"
	session := ahp.Claim{Kind: ahp.ClaimSession, Session: "ahp-session:/termhost-mcp/x", Chat: "ahp-chat:/termhost-mcp/x"}
	if err := m.Create(ahp.CreateTerminalParams{Channel: uri, Claim: &session, Meta: json.RawMessage(`{"termhost/record":true}`)}); err != nil {
		t.Fatal(err)
	}
	m.NoteAgent(uri, session, "Agent · Tester")
	rec := newRecorder("me")
	snap, err := m.Subscribe(rec, uri)
	if err != nil {
		t.Fatal(err)
	}
	owner := Policy{TakeClaim: true}
	dispatch := func(seq int64, a ahp.Action) {
		if got := m.Dispatch(rec, ahp.Origin{ClientID: "me", ClientSeq: seq}, uri, a, owner); got != Accepted {
			t.Fatalf("dispatch %+v = %v, want Accepted", a, got)
		}
	}
	if st := snap.State.(ahp.TerminalState); st.SupportsCommandDetection == nil || !*st.SupportsCommandDetection {
		if err := rec.waitFor(ctx, `"terminal/commandDetectionAvailable"`); err != nil {
			t.Fatal(err)
		}
	}
	call := session
	call.TurnID, call.ToolCallID = "turn-1", "call-1"
	dispatch(1, ahp.Action{Type: ahp.TerminalClaimed, Claim: call})
	dispatch(2, input(t, "echo by-agent\r"))
	if err := waitCount(ctx, rec, `"terminal/commandFinished"`, 1); err != nil {
		t.Fatal(err)
	}
	dispatch(3, ahp.Action{Type: ahp.TerminalClaimed, Claim: session}) // the tool call ended
	dispatch(4, input(t, "echo by-owner\r"))
	if err := waitCount(ctx, rec, `"terminal/commandFinished"`, 2); err != nil {
		t.Fatal(err)
	}

	later, err := m.Subscribe(newRecorder("later"), uri) // a client arriving now sees the marks beside the content
	if err != nil {
		t.Fatal(err)
	}
	st := later.State.(ahp.TerminalState)
	var marks []string
	for _, p := range st.Content {
		if p.Type != ahp.PartCommand {
			continue
		}
		by, ok := RunByOfSnapshot(later.Meta, p.CommandID)
		marks = append(marks, p.CommandLine+"="+map[bool]string{true: by.Kind + ":" + by.Name}[ok])
	}
	if want := []string{"echo by-agent=agent:Agent · Tester", "echo by-owner="}; !slices.Equal(marks, want) {
		t.Errorf("command parts' marks = %q, want %q", marks, want)
	}
	var meta map[string]AgentInfo
	for _, info := range m.Terminals() {
		if info.Resource == uri {
			_ = json.Unmarshal(info.Meta, &meta)
		}
	}
	if got, want := meta[MetaAgent], (AgentInfo{Session: session.Session, Chat: session.Chat, Name: "Agent · Tester"}); got != want {
		t.Errorf("catalogue _meta %s = %+v, want %+v", MetaAgent, got, want)
	}

	dispatch(5, input(t, "exit 0\r"))
	if err := rec.waitFor(ctx, `"terminal/exited"`); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(m.RecordingPath(uri))
	if err != nil {
		t.Fatal(err)
	}
	cast, err := recording.Parse(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var markers []string
	for _, ev := range cast.Events {
		if ev.Code == "m" {
			markers = append(markers, ev.Data)
		}
	}
	if want := []string{"Agent · Tester: echo by-agent", "echo by-owner", "exit 0", "exited with code 0"}; !slices.Equal(markers, want) {
		t.Errorf("markers = %q, want %q", markers, want)
	}
}
