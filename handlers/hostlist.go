package handlers

import (
	"encoding/json"
	"net/http"
	"os"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/handlers/hosts"
	"github.com/termhost/termhost/internal/lockrank"
)

// Hosts (docs/protocol.md, "Hosts"): the other termhost servers this one's
// hosts file lists, for the workbench and the CLI, which reach each with
// its own connection and credential. Who may list terminals (the owner,
// people whose role covers every terminal) may list the hosts; a share
// link, which reaches one terminal, never learns of other hosts.

// hostSubs are the connections told of every change of the host list.
type hostSubs struct {
	mu    lockrank.Mutex[lockrank.Server] // under it only the connections' queues (leaves)
	conns map[*conn]bool
}

// defaultHosts is the host list of a server given none: no other hosts,
// named after the machine.
func defaultHosts() *hosts.List {
	name, _ := os.Hostname()
	l, err := hosts.Open("", hosts.DefaultName(name), "", nil)
	if err != nil {
		panic(err) // DefaultName is always valid
	}
	return l
}

// mayListHosts: every connection but a share link's.
func (c *conn) mayListHosts() bool { return c.scope == "" && !c.lowered.Load() }

// watchHosts makes an initialized connection that may list terminals get
// the host list on every change.
func (s *Server) watchHosts(c *conn) {
	if !c.mayListHosts() {
		return
	}
	s.hostSubs.mu.Lock()
	defer s.hostSubs.mu.Unlock()
	if s.hostSubs.conns == nil {
		s.hostSubs.conns = map[*conn]bool{}
	}
	s.hostSubs.conns[c] = true
}

// hostsLeft stops telling a closed connection.
func (s *Server) hostsLeft(c *conn) {
	s.hostSubs.mu.Lock()
	defer s.hostSubs.mu.Unlock()
	delete(s.hostSubs.conns, c)
}

// hostsChanged sends the new list to every connection that may list
// terminals.
func (s *Server) hostsChanged(l ext.HostList) {
	csp := hostsCSP(l)
	s.csp.Store(&csp)
	frame, err := ahp.EncodeNotification(ext.NotifyHosts, l, ahp.Current)
	if err != nil {
		s.log.Warn("encode host list", "err", err)
		return
	}
	s.hostSubs.mu.Lock()
	defer s.hostSubs.mu.Unlock()
	for c := range s.hostSubs.conns {
		if c.mayListHosts() {
			c.push(frame)
		}
	}
}

// apiHosts answers GET <base>/api/hosts with the host list (ext.HostList).
func (s *Server) apiHosts(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if !s.mayList(w, r) {
		return
	}
	body, err := json.Marshal(s.cfg.Hosts.Current())
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(body, '\n'))
}

// mayList reports whether r comes from someone who may list terminals, or
// answers it: 401 without a valid credential (as the owner's endpoints),
// 403 for a share link or a person without a role.
func (s *Server) mayList(w http.ResponseWriter, r *http.Request) bool {
	who, ok, limited := s.authenticate(w, r, "")
	switch {
	case limited:
		return false
	case !ok && who.Person != "":
		http.Error(w, "not allowed", http.StatusForbidden)
		return false
	case !ok:
		s.metrics.authFailures.WithLabelValues("unauthenticated").Inc()
		http.Error(w, "authentication required", http.StatusUnauthorized)
		return false
	case who.Share != nil:
		http.Error(w, "a share link reaches its one terminal only", http.StatusForbidden)
		return false
	}
	return true
}
