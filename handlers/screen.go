package handlers

import (
	"context"
	"time"

	"github.com/termhost/termhost/ahp"
)

// MethodScreen is termhost's request extension for previews: the current
// screen of a terminal as text, from the server's screen model.
// Params {channel}; result {cols, rows, altScreen, lines}. Same access as
// subscribe: a share link sees only its terminal (-32008 otherwise).
const MethodScreen = "x-termhost/screen"

// ScreenResult is the result of x-termhost/screen.
type ScreenResult struct {
	Cols      int      `json:"cols"`
	Rows      int      `json:"rows"`
	AltScreen bool     `json:"altScreen"`
	Lines     []string `json:"lines"`
}

// screenTimeout bounds a preview request.
const screenTimeout = 3 * time.Second

// screen answers x-termhost/screen.
func (c *conn) screen(msg *ahp.Message) (any, *ahp.Error) {
	var p ahp.ChannelParams
	if err := decodeParams(msg, &p); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, ahp.Errorf(ahp.CodeInvalidParams, "invalid %s params: %v", MethodScreen, err)
	}
	if err := ahp.CheckTerminalURI(p.Channel); err != nil {
		return nil, ahp.Errorf(ahp.CodeInvalidParams, "%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), screenTimeout)
	defer cancel()
	st, err := c.s.m.Screen(ctx, c, p.Channel)
	if err != nil {
		return nil, c.rpcError(err)
	}
	return ScreenResult{Cols: st.Cols, Rows: st.Rows, AltScreen: st.AltScreen, Lines: st.Lines}, nil
}
