//go:build lockrank

//lint:file-ignore SA2001 these tests take locks for their order alone

package lockrank

import (
	"strings"
	"testing"
)

func mustPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if s, _ := r.(string); !strings.Contains(s, want) {
			t.Errorf("panic %v, want one containing %q", r, want)
		}
	}()
	f()
}

// TestOrderChecked: the order of the package doc holds, and every way of
// breaking it is caught at the Lock that breaks it.
func TestOrderChecked(t *testing.T) {
	var (
		signIns     Mutex[SignIns]
		catalogue   Mutex[Terminal]
		recorder    Mutex[Terminal]
		hub         Mutex[Hub]
		server      Mutex[Server]
		leaf, leaf2 Mutex[Leaf]
	)
	// The documented order, outermost first: fine.
	signIns.Lock()
	catalogue.Lock()
	hub.Lock()
	server.Lock()
	leaf.Lock()
	leaf.Unlock()
	server.Unlock()
	hub.Unlock()
	catalogue.Unlock()
	signIns.Unlock()

	hub.Lock()
	mustPanic(t, "taking a Terminal lock while holding a Hub lock", catalogue.Lock)
	hub.Unlock()
	catalogue.Lock()
	mustPanic(t, "taking a Terminal lock while holding a Terminal lock", recorder.Lock)
	catalogue.Unlock()
	leaf.Lock()
	mustPanic(t, "taking a Leaf lock while holding a Leaf lock", leaf2.Lock)
	mustPanic(t, "taking a SignIns lock while holding a Leaf lock", signIns.Lock)
	leaf.Unlock()
	// Nothing held any more: any lock may be taken.
	signIns.Lock()
	signIns.Unlock()
}

// TestUnlockElsewhere: a lock released by another goroutine is no longer
// counted as held by the one that took it.
func TestUnlockElsewhere(t *testing.T) {
	var hub Mutex[Hub]
	var catalogue Mutex[Terminal]
	hub.Lock()
	done := make(chan struct{})
	go func() { hub.Unlock(); close(done) }()
	<-done
	catalogue.Lock() // would be a violation if hub were still counted
	catalogue.Unlock()
}
