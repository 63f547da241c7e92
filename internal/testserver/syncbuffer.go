package testserver

import (
	"bytes"
	"sync"
)

// SyncBuffer is a bytes.Buffer that goroutines may write and read at the
// same time: a log sink for a server, or a command's captured output.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
