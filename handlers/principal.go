package handlers

import (
	"github.com/termhost/termhost/ahp"
)

// id names who a principal is, for binding clientIds: every owner
// credential (token, session cookie, --auth=none) is the one owner; each share
// link is its own principal.
func (p principal) id() string {
	if p.share == nil {
		return RoleOwner
	}
	return "share:" + p.share.ID
}

// errClientIDTaken is the -32602 for a clientId that another principal
// already uses (or that a terminal's claim names on its behalf).
func errClientIDTaken(clientID string) *ahp.Error {
	return ahp.Errorf(ahp.CodeInvalidParams, "clientId %q belongs to another user or share link: choose a fresh clientId", ahp.Clip(clientID))
}
