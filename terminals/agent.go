package terminals

import (
	"encoding/json"
	"sync/atomic"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
)

// Agents' terminals (docs/protocol.md, "Agents"): the server remembers the
// agent session that last held a terminal, so the owner can hand it back
// after taking control, and marks the commands an agent's tool call ran.

// MetaAgent is the catalogue entry's _meta key naming the agent session
// that last held the terminal: {"session", "chat", "name"}. The owner hands
// the terminal back by dispatching terminal/claimed with
// {kind: "session", session, chat}.
const MetaAgent = ext.MetaAgent

// MetaRunBy is the _meta key of terminal/commandExecuted (and so of the
// command part) marking a command run while an agent's tool call held the
// terminal: {"kind": "agent", "name": "Agent · Claude Code"}, or while a
// person signed in by SSO held it: {"kind": "person", "name": "Alice Smith"}.
const MetaRunBy = ext.MetaRunBy

// AgentInfo is the value of MetaAgent.
type AgentInfo = ext.AgentInfo

// RunBy is the value of MetaRunBy.
type RunBy = ext.RunBy

// agentSlot is a terminal's last agent session.
type agentSlot struct{ cur atomic.Pointer[AgentInfo] }

// NoteAgent records that a session claim was accepted on a terminal. name
// is the agent's presence name when its own connection set the claim; an
// empty name (the owner handing the terminal back) keeps the name known for
// that session.
func (m *Manager) NoteAgent(uri string, claim ahp.Claim, name string) {
	if claim.Kind != ahp.ClaimSession {
		return
	}
	m.mu.Lock()
	t := m.terms[uri]
	m.mu.Unlock()
	if t == nil {
		return
	}
	if info := t.noteAgent(claim, name); info != nil {
		m.hub.SetInfoMeta(uri, MetaAgent, *info)
	}
}

// noteAgent records the agent session of a session claim on t (see
// NoteAgent) and returns it, or nil when it did not change.
func (t *terminal) noteAgent(claim ahp.Claim, name string) *AgentInfo {
	old := t.agent.cur.Load()
	if name == "" && old != nil && old.Session == claim.Session {
		name = old.Name
	}
	if name == "" {
		name = "Agent"
	}
	chat := claim.Chat
	if chat == "" { // a ≤ 0.8 client's claim: ≥ 0.9 clients see the session as its chat
		chat = claim.Session
	}
	info := &AgentInfo{Session: claim.Session, Chat: chat, Name: name}
	if old != nil && *old == *info {
		return nil
	}
	t.agent.cur.Store(info)
	return info
}

// runByMeta is the _meta of a command starting now: an agent's mark while
// one of its tool calls holds the terminal, else nil.
func (t *terminal) runByMeta() json.RawMessage {
	claim, ok := t.m.Claim(t.uri)
	if ok && claim.Kind == ahp.ClaimClient {
		if f := t.m.cfg.Hooks.PersonOf; f != nil {
			if name, ok := f(claim.ClientID); ok {
				b, _ := json.Marshal(map[string]RunBy{MetaRunBy: {Kind: ext.RunByPerson, Name: name}})
				return b
			}
		}
		return nil
	}
	if !ok || claim.Kind != ahp.ClaimSession || claim.ToolCallID == "" {
		return nil
	}
	name := "Agent"
	if info := t.agent.cur.Load(); info != nil && info.Session == claim.Session {
		name = info.Name
	}
	b, _ := json.Marshal(map[string]RunBy{MetaRunBy: {Kind: ext.RunByAgent, Name: name}})
	return b
}

// RunByOfSnapshot reads the mark of the command commandID from a terminal
// snapshot's _meta (ext.MetaCommandMeta): a command part of the state has
// no _meta, as AHP's reducer makes none.
func RunByOfSnapshot(meta json.RawMessage, commandID string) (RunBy, bool) {
	var m map[string]ext.CommandMeta
	if len(meta) == 0 || json.Unmarshal(meta, &m) != nil {
		return RunBy{}, false
	}
	b, err := json.Marshal(m[ext.MetaCommandMeta][commandID])
	if err != nil {
		return RunBy{}, false
	}
	return RunByOf(b)
}

// RunByOf reads the mark of a terminal/commandExecuted's _meta.
func RunByOf(meta json.RawMessage) (RunBy, bool) {
	var m map[string]json.RawMessage
	if len(meta) == 0 || json.Unmarshal(meta, &m) != nil || m[MetaRunBy] == nil {
		return RunBy{}, false
	}
	var r RunBy
	if json.Unmarshal(m[MetaRunBy], &r) != nil || r.Kind == "" {
		return RunBy{}, false
	}
	return r, true
}
