package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/client"
)

// explain turns an AHP client error into a sentence an agent (and the
// person reading over its shoulder) can act on.
func (a *Agent) explain(err error) error {
	where := "the termhost server"
	if a.cfg.Base != nil {
		where += " at " + a.cfg.Base.String()
	}
	var rpcErr *ahp.Error
	var netErr net.Error
	switch {
	case errors.Is(err, errClosed):
		return err
	case errors.Is(err, client.ErrUnauthorized):
		return fmt.Errorf("%s refused the owner token: check the token file or TERMHOST_TOKEN given to termhost mcp", where)
	case errors.As(err, &rpcErr):
		return fmt.Errorf("%s refused it: %s (AHP error %d)", where, rpcErr.Message, rpcErr.Code)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("cannot reach %s: connection refused; the user should start it with `termhost serve` (or point termhost mcp at it with --server)", where)
	case errors.Is(err, client.ErrConnectionLost), errors.Is(err, client.ErrClosed):
		return fmt.Errorf("lost the connection to %s (%v); try again: the next call reconnects", where, err)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Errorf("%s did not answer in time; try again", where)
	}
	return fmt.Errorf("talking to %s: %v", where, err)
}
