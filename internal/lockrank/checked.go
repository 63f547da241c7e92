//go:build lockrank

package lockrank

import (
	"fmt"
	"sync"

	"github.com/petermattis/goid"
)

// Mutex is a sync.Mutex of rank R whose Lock checks the order.
type Mutex[R Rank] struct{ mu sync.Mutex }

// Checked reports whether this build checks the lock order.
const Checked = true

// held is one lock a goroutine holds.
type held struct {
	lock any // the *Mutex[R]
	rank int
	name string
}

// heldList is the locks one goroutine holds, in the order taken.
type heldList struct {
	mu    sync.Mutex // another goroutine may release one of them
	locks []held
}

// holding maps a goroutine id to its heldList. Entries stay: goroutine ids
// are never reused, and tests start a bounded number of goroutines.
var holding sync.Map // int64 → *heldList

func listOf(g int64) *heldList {
	v, _ := holding.LoadOrStore(g, &heldList{})
	return v.(*heldList)
}

// Lock checks that every lock the calling goroutine holds ranks below m,
// then locks m.
func (m *Mutex[R]) Lock() {
	var r R
	rank, name := r.order()
	l := listOf(goid.Get())
	l.mu.Lock()
	for _, h := range l.locks {
		if h.rank >= rank {
			l.mu.Unlock()
			panic(fmt.Sprintf("lock order violation: taking a %s lock while holding a %s lock (see package lockrank)", name, h.name))
		}
	}
	l.mu.Unlock()
	m.mu.Lock()
	l.mu.Lock()
	l.locks = append(l.locks, held{lock: m, rank: rank, name: name})
	l.mu.Unlock()
}

// TryLock tries to lock m and reports whether it did. It never waits, so
// it cannot deadlock: the order is not checked, the lock is only noted.
func (m *Mutex[R]) TryLock() bool {
	if !m.mu.TryLock() {
		return false
	}
	var r R
	rank, name := r.order()
	l := listOf(goid.Get())
	l.mu.Lock()
	l.locks = append(l.locks, held{lock: m, rank: rank, name: name})
	l.mu.Unlock()
	return true
}

// Unlock unlocks m. A lock may be released by another goroutine than the
// one that took it; it is then looked for among every goroutine's.
func (m *Mutex[R]) Unlock() {
	if !listOf(goid.Get()).drop(m) {
		holding.Range(func(_, v any) bool { return !v.(*heldList).drop(m) })
	}
	m.mu.Unlock()
}

// drop removes m from l, reporting whether l held it.
func (l *heldList) drop(m any) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.locks) - 1; i >= 0; i-- {
		if l.locks[i].lock == m {
			l.locks = append(l.locks[:i], l.locks[i+1:]...)
			return true
		}
	}
	return false
}
