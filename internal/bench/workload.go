package bench

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// shellSpec is how the raw baseline starts the shell the server runs.
type shellSpec struct {
	argv []string
	env  []string
	dir  string
}

// marker is an end-of-output line that a command prints but whose text does
// not appear in the command line the shell echoes.
type marker struct{ a, b string }

func newMarker() marker {
	var r [6]byte
	_, _ = rand.Read(r[:])
	return marker{"THB", "END" + hex.EncodeToString(r[:])}
}

func (m marker) text() string { return m.a + m.b }

// command prints the marker (typed, with Enter).
func (m marker) command() string { return fmt.Sprintf("printf '%%s%%s\\n' %s %s\r", m.a, m.b) }

// catCommand prints path times, then the marker.
func (m marker) catCommand(path string, times int) string {
	return fmt.Sprintf("i=0; while [ $i -lt %d ]; do cat '%s'; i=$((i+1)); done; printf '%%s%%s\\n' %s %s\r",
		times, path, m.a, m.b)
}

// MixedText returns n bytes of terminal output as programs write it: mostly
// ASCII, SGR colours and some multi-byte UTF-8, in lines.
func MixedText(n int) []byte {
	var b bytes.Buffer
	b.Grow(n + 256)
	for i := 0; b.Len() < n; i++ {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, "%07d \x1b[1;3%dmcolour\x1b[0m text ü € 漢字 ok %s\n", i, i%8, "abcdefghij")
		case 1:
			fmt.Fprintf(&b, "%07d plain ascii log line: the quick brown fox jumps over the lazy dog %d\n", i, i*7)
		case 2:
			fmt.Fprintf(&b, "\x1b[38;5;%dm%07d\x1b[0m \x1b[32mINFO\x1b[0m request served in %dms path=/api/v1/items/%d\n", i%256, i, i%97, i)
		default:
			fmt.Fprintf(&b, "%07d\tcolumns\tand\ttabs\t→ arrows ✓ checks 👍 %x\n", i, i)
		}
	}
	// Cut at a line end so repeats stay whole lines.
	out := b.Bytes()
	if j := bytes.LastIndexByte(out[:min(n, len(out))], '\n'); j > 0 {
		out = out[:j+1]
	}
	return out
}

// workload is a file of mixed text the shells cat.
type workload struct {
	path  string
	chunk int64 // file size
}

func newWorkload(dir string, chunk int) (*workload, error) {
	data := MixedText(chunk)
	path := filepath.Join(dir, "output.txt")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return nil, err
	}
	return &workload{path: path, chunk: int64(len(data))}, nil
}

// times is how many cats give at least size bytes.
func (w *workload) times(size int64) int {
	return int(max(1, (size+w.chunk-1)/w.chunk))
}
