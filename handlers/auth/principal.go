package auth

// Principal is who a request acts for.
type Principal struct {
	Role  string
	Share *Share // nil for the owner
	// Person is the identity a single sign-on proxy vouched for
	// (alice@corp.com), Name how to show them; both empty without SSO. A
	// person in no role list has Person set and Role empty.
	Person, Name string
	// FromRoles: Role is the one the roles directory gives Person (not a
	// token's or a share link's), so it changes with the roles.
	FromRoles bool
}

// Scope is the one terminal a share link reaches, "" for the owner.
func (p Principal) Scope() string {
	if p.Share == nil {
		return ""
	}
	return p.Share.Terminal
}

// ID names who a principal is, for binding clientIds: every owner
// credential (token, session cookie, --auth=none) is the one owner; each share
// link is its own principal; each person signed in by SSO is their own.
func (p Principal) ID() string {
	if p.Share == nil && p.Person != "" {
		return "person:" + p.Person
	}
	if p.Share == nil {
		return RoleOwner
	}
	return "share:" + p.Share.ID
}
