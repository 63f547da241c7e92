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
// reader; a request over the bound is refused with 503. One participant
// but the owner runs at most Budgets.ParticipantDownloads of them (429
// past it), and the last free slot is kept for the owner.
const maxDownloads = 8

// downloadChunk is the most a download writes under one deadline
// (Budgets.DownloadStall).
const downloadChunk = 32 << 10

// mountRecordings serves a terminal's recording and its output as text,
// to whoever may see the terminal: the owner, and a share link (viewer or
// driver) for its own terminal.
func (s *Server) mountRecordings(r chi.Router) {
	d := &downloads{s: s}
	r.Get("/t/{id}/recording.cast", d.serve(s.downloadRecording))
	r.Get("/t/{id}/output.txt", d.serve(s.downloadOutput))
}

// downloads counts the downloads in progress.
type downloads struct {
	s     *Server
	inUse int // under s.mu
}

// serve checks access to the terminal, then runs h in a free slot with a
// deadline on each chunk it writes; over a bound it answers 503 or 429
// with Retry-After.
func (d *downloads) serve(h func(w http.ResponseWriter, r *http.Request, uri string)) http.HandlerFunc {
	s := d.s
	return func(w http.ResponseWriter, r *http.Request) {
		// A workbench on another host's page replays this host's
		// recordings: it may read them, with this host's own cookie.
		s.allowWorkbenchOrigin(w, r)
		uri, who, ok := s.terminalAccess(w, r)
		if !ok {
			return
		}
		release, status, why := d.acquire(who)
		if release == nil {
			s.metrics.overBudget.WithLabelValues("downloads").Inc()
			s.log.Info("download refused: "+why, "who", who.ID())
			w.Header().Set("Retry-After", "5")
			http.Error(w, why+": try again in a few seconds", status)
			return
		}
		defer release()
		s.recordDownload(r, who, uri)
		sw := &stallWriter{ResponseWriter: w, rc: http.NewResponseController(w), stall: s.cfg.Budgets.DownloadStall}
		h(sw, r, uri)
		if errors.Is(sw.err, os.ErrDeadlineExceeded) {
			s.metrics.overBudget.WithLabelValues("download_stalled").Inc()
			s.log.Info("download cut off: the client took nothing for too long", "who", who.ID(),
				"terminal", ahp.Clip(uri), "stall", s.cfg.Budgets.DownloadStall, "sent", sw.sent)
		}
	}
}

// acquire takes a download slot for who, or says why not (status 503: the
// server's slots are taken; 429: who runs its share already).
func (d *downloads) acquire(who auth.Principal) (release func(), status int, why string) {
	s := d.s
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.participantLocked(who)
	limit := maxDownloads
	if !p.owner {
		if p.downloads >= s.cfg.Budgets.ParticipantDownloads {
			return nil, http.StatusTooManyRequests,
				fmt.Sprintf("too many downloads of this %s at once (at most %d)", principalKind(who), s.cfg.Budgets.ParticipantDownloads)
		}
		limit-- // the last slot stays free for the owner
	}
	if d.inUse >= limit {
		return nil, http.StatusServiceUnavailable, fmt.Sprintf("too many downloads at once (at most %d)", maxDownloads)
	}
	d.inUse++
	p.downloads++
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		d.inUse--
		p.downloads--
	}, 0, ""
}

// principalKind names who in a refusal.
func principalKind(who auth.Principal) string {
	switch {
	case who.Share != nil:
		return "share link"
	case who.Person != "":
		return "person"
	}
	return "owner"
}

// stallWriter writes a download in chunks of at most downloadChunk bytes,
// each under a write deadline of stall from its start: a client that takes
// nothing for that long is cut off, so a slow reader cannot keep a slot
// for hours. (net/http clears the deadline after the response.)
type stallWriter struct {
	http.ResponseWriter
	rc    *http.ResponseController
	stall time.Duration
	sent  int64
	err   error // the first write error
}

func (w *stallWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 && w.err == nil {
		chunk := p[:min(len(p), downloadChunk)]
		if err := w.rc.SetWriteDeadline(time.Now().Add(w.stall)); err != nil {
			w.err = err
			break
		}
		m, err := w.ResponseWriter.Write(chunk)
		n, w.sent, p = n+m, w.sent+int64(m), p[m:]
		w.err = err
	}
	return n, w.err
}

// Unwrap lets http.ResponseController reach the connection.
func (w *stallWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// downloadRecording sends the .cast file, up to its last complete line
// (the recorder may be writing it), streamed from the disk (with ranges).
func (s *Server) downloadRecording(w http.ResponseWriter, r *http.Request, uri string) {
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
func (s *Server) downloadOutput(w http.ResponseWriter, r *http.Request, uri string) {
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
func (s *Server) terminalAccess(w http.ResponseWriter, r *http.Request) (string, auth.Principal, bool) {
	id, ok := pageTerminalID(r)
	if !ok || id == "" {
		http.NotFound(w, r)
		return "", auth.Principal{}, false
	}
	uri := ahp.TerminalURIOf(id)
	if ahp.CheckTerminalURI(uri) != nil {
		http.NotFound(w, r)
		return "", auth.Principal{}, false
	}
	who, ok, limited := s.authenticate(w, r, uri)
	switch {
	case limited:
		return "", who, false
	case !ok && s.identify(r, "", s.cookieNames(r)).ok:
		s.metrics.permissionDenied.WithLabelValues("download").Inc()
		http.Error(w, "this link does not give access to that terminal", http.StatusForbidden)
		return "", who, false
	case !ok:
		http.Error(w, "sign in first", http.StatusUnauthorized)
		return "", who, false
	case !s.m.Exists(uri):
		http.NotFound(w, r)
		return "", who, false
	}
	w.Header().Set("Cache-Control", "no-store")
	return uri, who, true
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
