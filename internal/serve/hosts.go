package serve

import (
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"

	"github.com/termhost/termhost/handlers/hosts"
	"github.com/termhost/termhost/internal/envflag"
)

// hostsFlags are serve's flags for the other hosts a workbench reaches.
func (o *serveOptions) hostsFlags(fs *envflag.Set) {
	fs.StringVar(&o.hostsFile, "hosts", "", "a `file` of the other termhost servers the workbench and termhost ls --all reach, one \"NAME URL\" a line (URL: the base URL browsers use for that box; # starts a comment); the line naming this server (by --host-name or --public-url) is skipped, so one file serves every box; re-read when it changes or on SIGHUP")
	fs.StringVar(&o.hostName, "host-name", "", "this server's `name` among the hosts (a letter or digit, then up to 62 letters, digits, '.', '_' or '-'; default: the machine's host name)")
}

// hosts loads the host list: the hosts file, which must parse now, and
// this server's name.
func (o *serveOptions) hosts() (*hosts.List, error) {
	name := o.hostName
	if name == "" {
		h, _ := os.Hostname()
		name = hosts.DefaultName(h)
	} else if !hosts.ValidName(name) {
		return nil, fmt.Errorf("--host-name %q: %s", name, hosts.NameRule)
	}
	l, err := hosts.Open(o.hostsFile, name, o.publicURL, nil)
	if err != nil {
		return nil, fmt.Errorf("--hosts: %w", err)
	}
	return l, nil
}

// logForeignOrigins says, once at start, which other origins' pages may
// open WebSockets here (--allowed-origin): a workbench on another box
// that lists this one.
func logForeignOrigins(o serveOptions, log *slog.Logger) {
	own := ""
	if u, err := url.Parse(o.publicURL); err == nil && u.Host != "" {
		own = strings.ToLower(u.Scheme + "://" + u.Host)
	}
	for _, origin := range o.allowedOrigins {
		origin = strings.TrimSuffix(origin, "/")
		if strings.ToLower(origin) != own {
			log.Info("accepting WebSockets from the workbench at " + origin)
		}
	}
}
