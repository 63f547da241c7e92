package client

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
)

// Typed calls of termhost's extensions (package ext). Each sends what the
// command line and the agent tools sent with Call, and decodes the result
// into ext's type. Errors are Call's (an *ahp.Error for a JSON-RPC error),
// or a result that does not decode.

// callInto calls method and decodes its result into out.
func (c *Client) callInto(ctx context.Context, method string, params, out any) error {
	raw, err := c.Call(ctx, method, params)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s: decode result: %w", method, err)
	}
	return nil
}

// Presence is who is on each terminal the client may see
// (ext.MethodPresence), in catalogue order. Subscribers of a terminal also
// get it as the ext.NotifyPresence event.
func (c *Client) Presence(ctx context.Context) ([]ext.PresenceList, error) {
	var r ext.PresenceResult
	if err := c.callInto(ctx, ext.MethodPresence, struct{}{}, &r); err != nil {
		return nil, err
	}
	return r.Terminals, nil
}

// Screen is a terminal's current screen as text (ext.MethodScreen), from
// the server's screen model.
func (c *Client) Screen(ctx context.Context, uri string) (ext.ScreenResult, error) {
	var r ext.ScreenResult
	err := c.callInto(ctx, ext.MethodScreen, ahp.ChannelParams{Channel: uri}, &r)
	return r, err
}

// SetRecording starts or resumes (on) or pauses a terminal's recording
// (ext.MethodRecord; owner only).
func (c *Client) SetRecording(ctx context.Context, uri string, on bool) error {
	_, err := c.Call(ctx, ext.MethodRecord, ext.RecordParams{Channel: uri, On: on})
	return err
}

// RequestControl asks for a terminal's claim (ext.MethodRequestControl):
// with ask its holder is asked (ext.ControlPending) unless nobody holds it
// (ext.ControlGranted); without, only a claim nobody holds is taken
// (ext.ControlHeld otherwise). The claim itself arrives as terminal/claimed.
func (c *Client) RequestControl(ctx context.Context, terminal string, ask bool) (ext.ControlResult, error) {
	var r ext.ControlResult
	err := c.callInto(ctx, ext.MethodRequestControl, ext.RequestControlParams{Ask: &ask, Channel: ahp.RootURI, Terminal: terminal}, &r)
	return r, err
}

// AnswerControl grants or declines the control request requestID on a
// terminal whose claim the client holds (ext.MethodAnswerControl).
func (c *Client) AnswerControl(ctx context.Context, terminal, requestID string, grant bool) error {
	_, err := c.Call(ctx, ext.MethodAnswerControl, ext.AnswerControlParams{Channel: ahp.RootURI, Grant: grant, RequestID: requestID, Terminal: terminal})
	return err
}

// CreateShare creates a share link (ext.MethodShareCreate; owner only). An
// empty p.Channel is the root channel. The result's URL holds the secret.
func (c *Client) CreateShare(ctx context.Context, p ext.ShareCreateParams) (ext.ShareInfo, error) {
	if p.Channel == "" {
		p.Channel = ahp.RootURI
	}
	var r ext.ShareInfo
	err := c.callInto(ctx, ext.MethodShareCreate, p, &r)
	return r, err
}

// Shares lists the live share links of a terminal, or of every terminal
// when terminal is "" (ext.MethodShareList; owner only), without URLs.
func (c *Client) Shares(ctx context.Context, terminal string) ([]ext.ShareInfo, error) {
	var r ext.ShareListResult
	if err := c.callInto(ctx, ext.MethodShareList, ext.ShareListParams{Channel: ahp.RootURI, Terminal: terminal}, &r); err != nil {
		return nil, err
	}
	return r.Shares, nil
}

// RevokeShare revokes a share link and closes its connections
// (ext.MethodShareRevoke; owner only).
func (c *Client) RevokeShare(ctx context.Context, id string) error {
	_, err := c.Call(ctx, ext.MethodShareRevoke, ext.ShareRevokeParams{Channel: ahp.RootURI, ID: id})
	return err
}
