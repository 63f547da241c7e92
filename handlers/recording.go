package handlers

import (
	"bytes"
	"errors"
	"mime"
	"net/http"
	"os"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/terminals/recording"
)

// methodRecord is termhost's extension command that starts, pauses or
// resumes a terminal's recording: {channel, on} → null. Owner only.
const methodRecord = "x-termhost/record"

func (c *conn) recordCommand(msg *ahp.Message) (any, *ahp.Error) {
	var p struct {
		Channel string `json:"channel"`
		On      *bool  `json:"on"`
	}
	if err := decodeParams(msg, &p); err != nil {
		return nil, err
	}
	if c.role != RoleOwner {
		return nil, c.denied("command", "only the owner can record terminals")
	}
	if err := ahp.CheckTerminalURI(p.Channel); err != nil {
		return nil, ahp.Errorf(ahp.CodeInvalidParams, "%v", err)
	}
	if p.On == nil {
		return nil, ahp.Errorf(ahp.CodeInvalidParams, "%s needs on: true or false", methodRecord)
	}
	if err := c.s.m.SetRecording(p.Channel, *p.On); err != nil {
		return nil, c.rpcError(err)
	}
	return nil, nil
}

// mountRecordings serves a terminal's recording and its output as text,
// to whoever may see the terminal: the owner, and a share link (viewer or
// driver) for its own terminal.
func (s *Server) mountRecordings(r chi.Router) {
	r.Get("/t/{id}/recording.cast", s.downloadRecording)
	r.Get("/t/{id}/output.txt", s.downloadOutput)
}

// downloadRecording sends the .cast file, up to its last complete line
// (the recorder may be writing it).
func (s *Server) downloadRecording(w http.ResponseWriter, r *http.Request) {
	uri, ok := s.terminalAccess(w, r)
	if !ok {
		return
	}
	data, err := s.readRecording(uri)
	switch {
	case errors.Is(err, os.ErrNotExist):
		http.Error(w, "this terminal has no recording", http.StatusNotFound)
		return
	case err != nil:
		s.log.Warn("read recording", "terminal", ahp.Clip(uri), "err", err)
		http.Error(w, "cannot read the recording", http.StatusInternalServerError)
		return
	}
	attachment(w, "application/x-asciicast", ahp.TerminalIDOf(uri)+".cast")
	_, _ = w.Write(data)
}

// downloadOutput sends the terminal's output as plain text: the recording's
// when there is one, else the scrollback's.
func (s *Server) downloadOutput(w http.ResponseWriter, r *http.Request) {
	uri, ok := s.terminalAccess(w, r)
	if !ok {
		return
	}
	var output string
	data, err := s.readRecording(uri)
	switch {
	case errors.Is(err, os.ErrNotExist):
		output, _ = s.m.Content(uri)
	case err != nil:
		s.log.Warn("read recording", "terminal", ahp.Clip(uri), "err", err)
		http.Error(w, "cannot read the recording", http.StatusInternalServerError)
		return
	default:
		cast, err := recording.Parse(bytes.NewReader(data))
		if err != nil {
			s.log.Warn("parse recording", "terminal", ahp.Clip(uri), "err", err)
			http.Error(w, "cannot read the recording", http.StatusInternalServerError)
			return
		}
		output = cast.Output()
	}
	attachment(w, "text/plain; charset=utf-8", ahp.TerminalIDOf(uri)+".txt")
	_, _ = w.Write([]byte(recording.PlainText(output)))
}

// readRecording reads a terminal's recording up to its last complete line;
// os.ErrNotExist when it has none.
func (s *Server) readRecording(uri string) ([]byte, error) {
	path := s.m.RecordingPath(uri)
	if path == "" {
		return nil, os.ErrNotExist
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return data[:bytes.LastIndexByte(data, '\n')+1], nil
}

// terminalAccess answers the request itself unless it may see the
// terminal of /t/{id}/…: 401 without a valid credential, 403 with one for
// another terminal (a share link), 404 for a terminal that does not exist.
func (s *Server) terminalAccess(w http.ResponseWriter, r *http.Request) (string, bool) {
	id, ok := pageTerminalID(r)
	if !ok || id == "" {
		http.NotFound(w, r)
		return "", false
	}
	uri := ahp.TerminalURIOf(id)
	if ahp.CheckTerminalURI(uri) != nil {
		http.NotFound(w, r)
		return "", false
	}
	_, ok, limited := s.authenticate(w, r, uri)
	switch {
	case limited:
		return "", false
	case !ok && s.identify(r, "", s.cookieNames(r)).ok:
		s.metrics.permissionDenied.WithLabelValues("download").Inc()
		http.Error(w, "this link does not give access to that terminal", http.StatusForbidden)
		return "", false
	case !ok:
		http.Error(w, "sign in first", http.StatusUnauthorized)
		return "", false
	case !s.m.Exists(uri):
		http.NotFound(w, r)
		return "", false
	}
	w.Header().Set("Cache-Control", "no-store")
	return uri, true
}

// attachment sets the headers of a download named name.
func attachment(w http.ResponseWriter, contentType, name string) {
	name = strings.Map(func(r rune) rune {
		if r < ' ' || r == '/' || r == '\\' || r == '"' || r == 0x7f {
			return '_'
		}
		return r
	}, name)
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
}
