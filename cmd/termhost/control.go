package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/terminals"
)

// termhost's control extension (docs/protocol.md, "Handing over control").
const (
	methodRequestControl = "x-termhost/requestControl"
	methodAnswerControl  = "x-termhost/answerControl"
	notifyControlRequest = "x-termhost/controlRequest"
)

// controlNotice is the params of x-termhost/controlRequest.
type controlNotice struct {
	Terminal    string           `json:"terminal"`
	RequestID   string           `json:"requestId"`
	Status      string           `json:"status"`
	From        terminals.Member `json:"from"`
	AutoGrantMs int64            `json:"autoGrantMs"`
	Auto        bool             `json:"auto"`
}

// controlState is the request for control waiting for our answer, if any
// (we hold the claim): the stdin goroutine answers it, the events
// goroutine sets it.
type controlState struct {
	mu      sync.Mutex
	pending string // requestId
}

// requestControl asks the holder for the claim (attach --take through a
// share link). Typing starts when the claim arrives (terminal/claimed).
func (s *session) requestControl(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	raw, err := s.c.Call(cctx, methodRequestControl, map[string]string{"channel": ahp.RootURI, "terminal": s.uri})
	if err != nil {
		s.typing.Store(false)
		s.note("cannot take control: %s; watching read-only", explainError(s.base, err))
		return
	}
	var r struct {
		Status      string `json:"status"`
		AutoGrantMs int64  `json:"autoGrantMs"`
	}
	_ = json.Unmarshal(raw, &r)
	if r.Status == "granted" {
		return
	}
	s.typing.Store(false)
	s.note("asked for control; waiting for the holder (yours after %s if they do not type)…", time.Duration(r.AutoGrantMs)*time.Millisecond)
}

// onNotification handles the control notices of our terminal: answers to
// our request, and requests to us as the holder.
func (s *session) onNotification(ev client.Event) {
	if ev.Method != notifyControlRequest {
		return
	}
	var n controlNotice
	if json.Unmarshal(ev.Params, &n) != nil || n.Terminal != s.uri {
		return
	}
	who := memberText(n.From)
	if n.From.ID == terminals.PresenceID(s.c.ClientID()) { // our own request
		switch n.Status {
		case "declined":
			s.note("your request for control was declined; watching read-only")
		case "cancelled":
			s.note("your request for control ended: the claim moved elsewhere")
		}
		return
	}
	s.ctl.mu.Lock()
	if n.Status == "pending" {
		s.ctl.pending = n.RequestID
	} else if s.ctl.pending == n.RequestID {
		s.ctl.pending = ""
	}
	s.ctl.mu.Unlock()
	switch n.Status {
	case "pending":
		s.note("%s asks for control: Ctrl-\\ y grants, Ctrl-\\ n declines (granted by itself after %s without typing)", who, time.Duration(n.AutoGrantMs)*time.Millisecond)
	case "granted":
		s.note("control handed to %s", who)
	case "declined":
		s.note("declined %s's request for control", who)
	}
}

// answerPending answers the request waiting for us, if any (Ctrl-\ y or
// Ctrl-\ n); it reports whether there was one. It runs on the stdin
// goroutine: the call goes on its own, the outcome is noted when the
// server's notice arrives.
func (s *session) answerPending(grant bool) bool {
	s.ctl.mu.Lock()
	id := s.ctl.pending
	s.ctl.pending = ""
	s.ctl.mu.Unlock()
	if id == "" {
		return false
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = s.c.Call(ctx, methodAnswerControl, map[string]any{"channel": ahp.RootURI, "terminal": s.uri, "requestId": id, "grant": grant})
	}()
	return true
}

// memberText names a presence member for a person: its label and what it is.
func memberText(m terminals.Member) string {
	name := printable(m.Name)
	switch m.Kind {
	case terminals.KindDriver, terminals.KindViewer:
		return fmt.Sprintf("%s (%s link)", name, m.Kind)
	case terminals.KindCLI:
		return name + " (CLI)"
	}
	if m.Device != "" {
		return fmt.Sprintf("%s (%s)", name, printable(m.Device))
	}
	return name
}
