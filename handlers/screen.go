package handlers

import (
	"context"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
)

// screenTimeout bounds a preview request.
const screenTimeout = 3 * time.Second

// screen answers ext.MethodScreen, termhost's request for previews: the
// current screen of a terminal as text, from the server's screen model.
// Same access as subscribe: a share link sees only its terminal (-32008
// otherwise).
func (c *conn) screen(msg *ahp.Message) (any, *ahp.Error) {
	var p ahp.ChannelParams
	if err := decodeParams(msg, &p); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, ahp.Errorf(ahp.CodeInvalidParams, "invalid %s params: %v", ext.MethodScreen, err)
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
	return ext.ScreenResult{Cols: st.Cols, Rows: st.Rows, AltScreen: st.AltScreen, Lines: st.Lines}, nil
}
