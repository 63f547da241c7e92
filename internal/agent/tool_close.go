package agent

import (
	"context"
	"fmt"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
)

type closeIn struct {
	Host     string `json:"host,omitempty" jsonschema:"the host the terminal is on, as list_terminals names it (default: the server's own)"`
	Terminal string `json:"terminal" jsonschema:"the terminal's id"`
}

func (in closeIn) hostName() string { return in.Host }

type closeOut struct {
	Terminal string `json:"terminal"`
	Closed   bool   `json:"closed"`
}

func (a *Agent) closeTerminal(ctx context.Context, s *session, in closeIn) (closeOut, string, error) {
	uri, err := terminalURI(in.Terminal)
	if err != nil {
		return closeOut{}, "", err
	}
	if err := s.mayUse(uri); err != nil {
		return closeOut{}, "", err
	}
	c, err := s.conn(ctx)
	if err != nil {
		return closeOut{}, "", err
	}
	id := ahp.TerminalIDOf(uri)
	if _, err := c.Call(ctx, ahp.MethodDisposeTerminal, ahp.ChannelParams{Channel: uri}); err != nil {
		if client.IsNotFound(err) {
			return closeOut{}, "", fmt.Errorf("there is no terminal %s (closed already?): list_terminals shows the open ones", id)
		}
		return closeOut{}, "", s.a.explain(err)
	}
	s.mu.Lock()
	delete(s.opened, uri)
	delete(s.terms, uri)
	s.mu.Unlock()
	_ = c.Unsubscribe(ctx, uri)
	return closeOut{Terminal: id, Closed: true}, fmt.Sprintf("Closed terminal %s.", id), nil
}
