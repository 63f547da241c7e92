package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// Log appends events to a file. Writes never block on the disk: events go
// to a buffer that one goroutine writes and fsyncs, so everything that
// arrived during one fsync is in the next (batches grow with the load).
// A nil *Log records nothing. Rotation is logrotate's: move the file away
// and call Reopen (termhost serve does on SIGHUP).
type Log struct {
	path   string
	log    *slog.Logger
	now    func() time.Time
	budget budget // the participants' volume budget (budget.go)
	typing typing // input not yet written (typing.go)

	mu      sync.Mutex
	cond    *sync.Cond // signals flushed progress and new work
	f       *os.File
	buf     []byte
	queued  uint64 // events accepted
	synced  uint64 // events written and fsync'd
	reopen  bool
	closed  bool
	flusher sync.WaitGroup
}

// MaxBuffered bounds the bytes waiting for the disk; past it new events are
// dropped and counted in the log (a stuck disk must not grow memory).
const MaxBuffered = 16 << 20

// Open opens (creating, mode 0600) path for appending.
func Open(path string, log *slog.Logger) (*Log, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f, err := openFile(path)
	if err != nil {
		return nil, err
	}
	l := &Log{path: path, log: log.With("component", "audit"), now: time.Now, f: f, budget: budget{window: Window},
		typing: typing{window: InputWindow}}
	l.cond = sync.NewCond(&l.mu)
	l.flusher.Add(1)
	go l.flush()
	return l, nil
}

func openFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	return f, nil
}

// Record appends e (its Time set now when zero), or counts it into its
// participant's summary when it is over the volume budget (budget.go).
func (l *Log) Record(e Event) {
	if l == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = l.now()
	}
	e.Time = e.Time.UTC()
	l.admit(l.typing.takeParticipant(e)) // the participant's typing goes first
	l.admit([]Event{e})
}

// Input records e, input of e.Bytes bytes, summed with its participant's
// other input into the same terminal (typing.go): enter says the bytes end
// a line (hold a CR or LF), which writes the sum at once.
func (l *Log) Input(e Event, enter bool) {
	if l == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = l.now()
	}
	e.Time, e.Event = e.Time.UTC(), Input
	l.admit(l.typing.add(e, enter, l.admit))
}

// admit appends each event, or counts it into its participant's summary
// when it is over the volume budget (budget.go).
func (l *Log) admit(events []Event) {
	for _, e := range events {
		if l.budget.admit(e, e.Time, l.append) {
			l.append([]Event{e})
		}
	}
}

// append writes events to the buffer.
func (l *Log) append(events []Event) {
	for _, e := range events {
		l.appendOne(e)
	}
}

func (l *Log) appendOne(e Event) {
	line, err := json.Marshal(e)
	if err != nil {
		l.log.Error("encode audit event", "err", err)
		return
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	if len(l.buf)+len(line) > MaxBuffered {
		l.log.Error("audit event dropped: the audit log's disk does not keep up", "event", e.Event)
		return
	}
	l.buf = append(l.buf, line...)
	l.queued++
	l.cond.Broadcast()
}

// Sync writes the input waiting to be summed and waits until every event
// recorded so far is written and fsync'd.
func (l *Log) Sync() {
	if l == nil {
		return
	}
	l.admit(l.typing.takeAll(false))
	l.mu.Lock()
	defer l.mu.Unlock()
	want := l.queued
	for l.synced < want && !l.closed {
		l.cond.Wait()
	}
}

// Reopen makes the next batch go to a newly opened file at the path (after
// logrotate moved the old one away).
func (l *Log) Reopen() {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.reopen = true
	l.cond.Broadcast()
	l.mu.Unlock()
	l.Sync()
}

// Close writes the input waiting, the summaries of the budget's windows
// and what is buffered, and closes the file. It is safe to call twice.
func (l *Log) Close() error {
	if l == nil {
		return nil
	}
	l.admit(l.typing.takeAll(true))
	l.append(l.budget.close())
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.cond.Broadcast()
	l.mu.Unlock()
	l.flusher.Wait()
	return l.f.Close()
}

// flush is the one writer: it takes the whole buffer, writes and fsyncs it.
func (l *Log) flush() {
	defer l.flusher.Done()
	for {
		l.mu.Lock()
		for len(l.buf) == 0 && !l.closed && !l.reopen {
			l.cond.Wait()
		}
		batch, upto, reopen, closed := l.buf, l.queued, l.reopen, l.closed
		l.buf, l.reopen = nil, false
		l.mu.Unlock()
		if reopen {
			if f, err := openFile(l.path); err != nil {
				l.log.Error("reopen audit log: keeping the old file", "err", err)
			} else {
				_ = l.f.Close()
				l.f = f
			}
		}
		if len(batch) > 0 {
			_, err := l.f.Write(batch)
			if err == nil {
				err = l.f.Sync()
			}
			if err != nil && !errors.Is(err, os.ErrClosed) {
				l.log.Error("write audit log", "err", err, "bytes", len(batch))
			}
		}
		l.mu.Lock()
		l.synced = upto
		l.cond.Broadcast()
		l.mu.Unlock()
		if closed {
			return
		}
	}
}
