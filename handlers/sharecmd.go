package handlers

import (
	"encoding/json"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/handlers/auth"
	"github.com/termhost/termhost/internal/audit"
)

func infoOf(sh *auth.Share) ext.ShareInfo {
	in := ext.ShareInfo{ID: sh.ID, Terminal: sh.Terminal, Role: sh.Role, Label: sh.Label, CreatedAt: sh.CreatedAt.UnixMilli()}
	if !sh.ExpiresAt.IsZero() {
		ms := sh.ExpiresAt.UnixMilli()
		in.ExpiresAt = &ms
	}
	return in
}

// shareCommand answers termhost's share link commands, ext.MethodShareCreate,
// ext.MethodShareList and ext.MethodShareRevoke. Their params are decoded
// with one struct, as they always were, not with ext's per-method types:
// invalid params are refused with the same messages. Results are encoded by
// encoding/json, as they always were (a label keeps its <, > and & escaped).
func (c *conn) shareCommand(msg *ahp.Message) (any, *ahp.Error) {
	var p struct {
		Terminal   string `json:"terminal"`
		Role       string `json:"role"`
		TTLSeconds int64  `json:"ttlSeconds"`
		Label      string `json:"label"`
		ID         string `json:"id"`
	}
	if err := decodeParams(msg, &p); err != nil {
		return nil, err
	}
	shares := c.s.auth.Shares
	switch msg.Method {
	case ext.MethodShareCreate:
		if err := ahp.CheckTerminalURI(p.Terminal); err != nil {
			return nil, ahp.Errorf(ahp.CodeInvalidParams, "%v", err)
		}
		if !c.s.m.Exists(p.Terminal) {
			return nil, ahp.Errorf(ahp.CodeNotFound, "no such terminal: %s", p.Terminal)
		}
		if p.Role == "" {
			p.Role = auth.RoleViewer
		}
		if p.TTLSeconds < 0 || p.TTLSeconds > 10*365*24*3600 {
			return nil, ahp.Errorf(ahp.CodeInvalidParams, "ttlSeconds must be between 0 (no expiry) and ten years")
		}
		sh, token, err := shares.CreateLabelled(p.Terminal, p.Role, p.Label, time.Duration(p.TTLSeconds)*time.Second)
		if err != nil {
			return nil, ahp.Errorf(ahp.CodeInvalidParams, "%v", err)
		}
		in := infoOf(sh)
		in.URL = c.publicBase + terminalPath(p.Terminal) + "#share=" + token
		c.log.Info("share link created", "share", sh.ID, "terminal", p.Terminal, "role", sh.Role, "ttl", p.TTLSeconds)
		c.record(audit.ShareCreated, p.Terminal, func(e *audit.Event) { e.Share, e.To = sh.ID, sh.Role })
		return json.RawMessage(mustMarshal(in)), nil
	case ext.MethodShareList:
		list := []ext.ShareInfo{}
		for _, sh := range shares.List(p.Terminal) {
			list = append(list, infoOf(sh))
		}
		return json.RawMessage(mustMarshal(ext.ShareListResult{Shares: list})), nil
	default: // revoke
		sh, ok := shares.Revoke(p.ID)
		if !ok {
			return nil, ahp.Errorf(ahp.CodeNotFound, "no such share link: %q", p.ID)
		}
		c.log.Info("share link revoked", "share", sh.ID, "terminal", sh.Terminal)
		c.record(audit.ShareRevoked, sh.Terminal, func(e *audit.Event) { e.Share = sh.ID })
		c.s.disconnectShare(sh.ID, "share link revoked")
		return nil, nil
	}
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // plain structs always marshal
	}
	return b
}
