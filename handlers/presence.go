package handlers

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/mileusna/useragent"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/handlers/auth"
	"github.com/termhost/termhost/internal/label"
	"github.com/termhost/termhost/terminals"
)

// cliName is the clientInfo name of termhost's command line.
const cliName = "termhost-cli"

// agentName is the clientInfo name of termhost mcp's connections; their
// title is the MCP client's name (package agent).
const agentName = "termhost-mcp"

// connPresence is what presence shows of a connection: fixed at accept
// (device, share label) and at initialize or reconnect (clientInfo),
// before the connection subscribes to anything.
type connPresence struct {
	device string // "Firefox on Linux", from the User-Agent
	label  string // the share link's label
	info   ahp.Implementation
}

// agentName is the presence name of a termhost mcp connection, "" for
// any other (terminals.NoteAgent keeps the name it knows).
func (c *conn) agentName() string {
	if m := c.PresenceMember(); m.Kind == ext.KindAgent {
		return m.Name
	}
	return ""
}

// PresenceMember makes conn a terminals.Present: how others see it on a
// terminal. Names are labels; never a token or a clientId.
func (c *conn) PresenceMember() ext.Member {
	p := c.presence
	m := ext.Member{ID: c.presenceIDFor(c.clientID), Kind: c.role, Device: p.device}
	if c.person != "" && p.info.Name != cliName && p.info.Name != agentName {
		// Someone the SSO proxy signed in: their name, whatever the role
		// (a browser cannot name itself).
		m.Name, m.Person = c.personName(), true
		return m
	}
	cli := p.info.Name == cliName
	if cli {
		m.Device = "termhost CLI"
	} else if m.Device == "" && c.role == auth.RoleOwner {
		// Only the owner's clients name themselves: a share link's client
		// could pose as someone else ("Owner"); it is its link's label.
		m.Device = cleanLabel(firstNonEmpty(p.info.Title, p.info.Name))
	}
	switch {
	case c.role != auth.RoleOwner:
		// A label that could pass for a name termhost gives ("Owner")
		// says what it is: "Owner (viewer link)".
		m.Name = label.Distinct(cleanLabel(p.label), c.role+" link")
		if m.Name == "" {
			m.Name = "Unnamed " + c.role + " link"
		}
	case cli:
		m.Kind, m.Name, m.Device = ext.KindCLI, cleanLabel(p.info.Title), ""
		if m.Name == "" {
			m.Name = "termhost CLI"
		}
	case p.info.Name == agentName:
		m.Kind, m.Name, m.Device = ext.KindAgent, cleanLabel("Agent · "+firstNonEmpty(p.info.Title, "MCP client")), "termhost mcp"
		if c.person != "" {
			// Connected through /mcp by a person: theirs.
			m.Name += " (" + firstNonEmpty(c.name, c.person) + ")"
		}
	default:
		m.Name = "Owner"
	}
	return m
}

// personName is how an SSO person is shown: their display name, else
// their identity; a display name that could pass for one termhost gives
// ("Owner") with their identity: "Owner (alice@corp.test)".
func (c *conn) personName() string {
	return personLabel(c.name, c.person)
}

// personLabel is personName of a person with display name name.
func personLabel(name, person string) string {
	return label.Distinct(firstNonEmpty(name, person), person)
}

// presenceCommand answers the ext.MethodPresence request (params ignored):
// the presence of every terminal the connection may see, for a client that
// lists terminals without subscribing to them (termhost ls); subscribers get
// the ext.NotifyPresence notification.
func (c *conn) presenceCommand() (any, *ahp.Error) {
	return ext.PresenceResult{Terminals: c.s.m.Presence(c)}, nil
}

// deviceLabel names a browser for people ("Chrome on Android"), or "".
// Headless Chrome (the e2e tests) counts as Chrome.
func deviceLabel(userAgent string) string {
	if userAgent == "" {
		return ""
	}
	ua := useragent.Parse(userAgent)
	name := strings.TrimPrefix(ua.Name, "Headless")
	if name == "" || ua.OS == "" { // not a browser: clientInfo names it
		return ""
	}
	return cleanLabel(name + " on " + ua.OS)
}

// cleanLabel makes a client-supplied label safe to show (label.Clean: no
// control or direction characters), at most auth.MaxLabel characters.
func cleanLabel(s string) string {
	s = label.Clean(s)
	if r := []rune(s); len(r) > auth.MaxLabel {
		s = string(r[:auth.MaxLabel])
	}
	return s
}

func firstNonEmpty(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}

// clientInfo records the clientInfo a client initialized with (info set)
// and returns the one recorded, for a reconnect, which sends none.
func (s *Server) clientInfo(clientID string, info *ahp.Implementation) ahp.Implementation {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.clients[clientID]
	if rec == nil {
		return ahp.Implementation{}
	}
	if info != nil {
		rec.info = *info
	}
	return rec.info
}

// presenceIDOfClient is the presence id of a client's connections.
func presenceIDOfClient(clientID string) string { return terminals.PresenceID(clientID) }

// presenceIDOfPerson is the one presence id of an SSO person's
// connections. It is hashed apart from clientIds (which clients choose), so
// no client can take a person's presence id.
func presenceIDOfPerson(person string) string {
	sum := sha256.Sum256([]byte("termhost presence person\x00" + person))
	return "p" + hex.EncodeToString(sum[:6])
}
