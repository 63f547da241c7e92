package web

import (
	"strings"

	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/static"
)

// Page is what every view needs to know.
type Page struct {
	// BasePath is "" or a prefix such as "/term" (no trailing slash).
	BasePath string
	// TerminalID is "" for the workbench, or the id of /t/{id}
	// (the path part of ahp-terminal:/<id>).
	TerminalID string
	// Version is the server's version, shown in the status bar.
	Version string
	// Role is "owner", "driver" or "viewer".
	Role string
	// ServerUser and ServerHost are the Unix account and host the shells run
	// as, for the Share dialog's warning about driver links. Set them for
	// owner pages only ("" shows "the server's user").
	ServerUser string
	ServerHost string
	// Person is how a person signed in by SSO is named (their display name,
	// as presence shows it), "" for the owner token and share links.
	Person string
	// Scrollback is the server's content budget per terminal in bytes; the
	// browser keeps no more than that in its mirror (0: its default).
	Scrollback int
	// Hosts is the host list (GET <base>/api/hosts's answer) for a person
	// who may list the hosts, so that the page connects to every host as it
	// starts instead of after fetching the list; nil for a share link's
	// page, which never learns of other hosts.
	Hosts *ext.HostList
	// TestHooks loads the test build of the app (app-test.js, which has the
	// window.__termhost hook) instead of app.js. Only the e2e tests set it.
	TestHooks bool
}

// Config is the JSON the TypeScript app reads from
// <script id="termhost-config" type="application/json">.
type Config struct {
	BasePath   string `json:"basePath"`
	TerminalID string `json:"terminalId"`
	Version    string `json:"version"`
	Role       string `json:"role"`
	ServerUser string `json:"serverUser,omitempty"`
	ServerHost string `json:"serverHost,omitempty"`
	Person     string `json:"person,omitempty"`
	Scrollback int    `json:"scrollback,omitempty"`
	// The replay player's bundle and styles, loaded only when a replay opens.
	PlayerScript string `json:"playerScript,omitempty"`
	PlayerStyle  string `json:"playerStyle,omitempty"`
	// The host list (Page.Hosts), only on the app's pages.
	Hosts *ext.HostList `json:"hosts,omitempty"`
}

// config is the page's Config; the app's pages (script appScript) also
// get the replay player's URLs.
func (p Page) config(script string) Config {
	c := Config{BasePath: p.base(), TerminalID: p.TerminalID, Version: p.Version, Role: p.Role,
		ServerUser: p.ServerUser, ServerHost: p.ServerHost, Person: p.Person, Scrollback: p.Scrollback}
	if script == appScript {
		c.PlayerScript, c.PlayerStyle = p.asset("player.js"), p.asset("player.css")
		c.Hosts = p.Hosts
	}
	return c
}

// appBundle is the app's script: the test build only with TestHooks.
func (p Page) appBundle() string {
	if p.TestHooks {
		return TestBundle
	}
	return "app.js"
}

// TestBundle is the dist file of the app's test build (with the e2e hook).
// The server serves it only when configured for tests.
const TestBundle = "app-test.js"

func (p Page) base() string {
	return strings.TrimRight(p.BasePath, "/")
}

// asset is the URL of a bundle in static/dist, with its content hash.
func (p Page) asset(name string) string {
	return p.base() + "/static/" + static.URL(name)
}

// home is the URL of the workbench.
func (p Page) home() string {
	return p.base() + "/"
}

func (p Page) title() string {
	if p.TerminalID != "" {
		return p.TerminalID + " — termhost"
	}
	return "termhost"
}

// favicon is the neutral icon shown until the app draws its status icon.
const favicon = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'%3E%3Crect width='16' height='16' rx='3' fill='%231f1f1f'/%3E%3Cpath d='M3 4.5l3.5 3.5L3 11.5' stroke='%23cccccc' stroke-width='1.6' fill='none'/%3E%3Cpath d='M8 12h5' stroke='%23cccccc' stroke-width='1.6'/%3E%3C/svg%3E"

// loginConfig is what the login page's script needs.
type loginConfig struct {
	Endpoint string `json:"endpoint"`
}
