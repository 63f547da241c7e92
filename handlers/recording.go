package handlers

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
	"github.com/termhost/termhost/handlers/auth"
	"github.com/termhost/termhost/terminals/recording"
)

// recordCommand answers ext.MethodRecord, which starts, pauses or resumes
// a terminal's recording. Its params are decoded as they always were (a
// missing on is told from false), not with ext.RecordParams: invalid
// params are refused with the same messages.
func (c *conn) recordCommand(msg *ahp.Message) (any, *ahp.Error) {
	var p struct {
		Channel string `json:"channel"`
		On      *bool  `json:"on"`
	}
	if err := decodeParams(msg, &p); err != nil {
		return nil, err
	}
	if c.role != auth.RoleOwner {
		return nil, c.denied("command", "only the owner can record terminals")
	}
	if err := ahp.CheckTerminalURI(p.Channel); err != nil {
		return nil, ahp.Errorf(ahp.CodeInvalidParams, "%v", err)
	}
	if p.On == nil {
		return nil, ahp.Errorf(ahp.CodeInvalidParams, "%s needs on: true or false", ext.MethodRecord)
	}
	if err := c.s.m.SetRecording(p.Channel, *p.On); err != nil {
		return nil, c.rpcError(err)
	}
	return nil, nil
}

// maxDownloads bounds the recording downloads served at once, across all
// clients: each streams with a few buffers, but holds a file and a disk
// reader; a request over the bound is refused with 503.
const maxDownloads = 8

// mountRecordings serves a terminal's recording and its output as text,
// to whoever may see the terminal: the owner, and a share link (viewer or
// driver) for its own terminal.
func (s *Server) mountRecordings(r chi.Router) {
	d := &downloads{s: s, slots: make(chan struct{}, maxDownloads)}
	r.Get("/t/{id}/recording.cast", d.limit(s.downloadRecording))
	r.Get("/t/{id}/output.txt", d.limit(s.downloadOutput))
}

// downloads holds the slots of the downloads in progress.
type downloads struct {
	s     *Server
	slots chan struct{}
}

// limit runs h in a free slot, or answers 503 with Retry-After.
func (d *downloads) limit(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case d.slots <- struct{}{}:
			defer func() { <-d.slots }()
			h(w, r)
		default:
			d.s.log.Info("download refused: too many at once", "limit", maxDownloads)
			w.Header().Set("Retry-After", "5")
			http.Error(w, fmt.Sprintf("too many downloads at once (at most %d): try again in a few seconds", maxDownloads), http.StatusServiceUnavailable)
		}
	}
}

// downloadRecording sends the .cast file, up to its last complete line
// (the recorder may be writing it), streamed from the disk (with ranges).
func (s *Server) downloadRecording(w http.ResponseWriter, r *http.Request) {
	uri, ok := s.terminalAccess(w, r)
	if !ok {
		return
	}
	f, size, err := s.openRecording(uri)
	if !s.recordingFound(w, uri, err) {
		return
	}
	defer f.Close()
	attachment(w, "application/x-asciicast", ahp.TerminalIDOf(uri)+".cast")
	http.ServeContent(w, r, "", time.Time{}, io.NewSectionReader(f, 0, size))
}

// downloadOutput sends the terminal's output as plain text: the recording's
// when there is one (streamed, event by event), else the scrollback's.
func (s *Server) downloadOutput(w http.ResponseWriter, r *http.Request) {
	uri, ok := s.terminalAccess(w, r)
	if !ok {
		return
	}
	f, size, err := s.openRecording(uri)
	if errors.Is(err, os.ErrNotExist) {
		output, _ := s.m.Content(uri) // bounded by the scrollback
		attachment(w, "text/plain; charset=utf-8", ahp.TerminalIDOf(uri)+".txt")
		_, _ = io.WriteString(w, recording.PlainText(output))
		return
	}
	if !s.recordingFound(w, uri, err) {
		return
	}
	defer f.Close()
	attachment(w, "text/plain; charset=utf-8", ahp.TerminalIDOf(uri)+".txt")
	if err := recording.WriteText(w, io.NewSectionReader(f, 0, size)); err != nil {
		// The status is sent: the client sees a short body. A client that
		// went away is expected teardown.
		level := slog.LevelWarn
		if r.Context().Err() != nil {
			level = slog.LevelDebug
		}
		s.log.Log(r.Context(), level, "stream recording as text", "terminal", ahp.Clip(uri), "err", err)
	}
}

// recordingFound answers the request itself when the recording could not
// be opened: 404 when there is none, 500 on a read error.
func (s *Server) recordingFound(w http.ResponseWriter, uri string, err error) bool {
	switch {
	case errors.Is(err, os.ErrNotExist):
		http.Error(w, "this terminal has no recording", http.StatusNotFound)
		return false
	case err != nil:
		s.log.Warn("read recording", "terminal", ahp.Clip(uri), "err", err)
		http.Error(w, "cannot read the recording", http.StatusInternalServerError)
		return false
	}
	return true
}

// openRecording opens a terminal's recording and finds the end of its last
// complete line; os.ErrNotExist when it has none.
func (s *Server) openRecording(uri string) (*os.File, int64, error) {
	path := s.m.RecordingPath(uri)
	if path == "" {
		return nil, 0, os.ErrNotExist
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	size, err := recording.CompleteLength(f)
	if err != nil {
		_ = f.Close()
		return nil, 0, err
	}
	return f, size, nil
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
	who, ok, limited := s.authenticate(w, r, uri)
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
	s.recordDownload(r, who, uri)
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
