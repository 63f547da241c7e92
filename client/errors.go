package client

import (
	"errors"
	"fmt"
	"net/http"
)

// Errors callers act on.
var (
	// ErrClosed: Close was called.
	ErrClosed = errors.New("client closed")
	// ErrConnectionLost: the transport dropped while a call was in flight (it
	// may or may not have taken effect), or for good.
	ErrConnectionLost = errors.New("connection lost")
	// ErrUnauthorized: the server refused the WebSocket upgrade with 401 or 403.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrDeadLink: the connection went silent (a ping unanswered within
	// Options.PingTimeout); the client dropped it. Carried by
	// EventDisconnected.
	ErrDeadLink = errors.New("connection went silent")
)

// StatusError is a WebSocket upgrade that the server answered with an HTTP
// status instead of 101. 401 and 403 match ErrUnauthorized.
type StatusError struct {
	URL        string
	StatusCode int
	Status     string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s answered HTTP %s", e.URL, e.Status)
}

// Is makes 401 and 403 match ErrUnauthorized.
func (e *StatusError) Is(target error) bool {
	return target == ErrUnauthorized && (e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden)
}
