package envflag

import (
	"testing"

	"go.uber.org/goleak"
)

func TestSizeAndListFlags(t *testing.T) {
	sizes := []struct {
		in      string
		want    int
		wantErr bool
	}{
		{"1048576", 1 << 20, false}, {"512KiB", 512 << 10, false}, {"2MiB", 2 << 20, false}, {"1GiB", 1 << 30, false},
		{"64K", 64 << 10, false}, {"3M", 3 << 20, false}, {"1G", 1 << 30, false},
		{"-1", 0, true}, {"lots", 0, true}, {"1TiB", 0, true},
	}
	for _, tt := range sizes {
		var s Size
		err := s.Set(tt.in)
		if tt.wantErr {
			if err == nil || err.Error() != "want a size like 1048576, 512KiB or 1MiB" {
				t.Errorf("Size.Set(%q) = %v, want the size hint", tt.in, err)
			}
			continue
		}
		if err != nil || int(s) != tt.want || s.String() != strconvItoa(tt.want) {
			t.Errorf("Size.Set(%q) = %d (%q), %v; want %d", tt.in, s, s.String(), err, tt.want)
		}
	}
	var l List
	for _, v := range []string{"a, b,,c", " ", "d"} {
		if err := l.Set(v); err != nil {
			t.Fatal(err)
		}
	}
	if got := l.String(); got != "a,b,c,d" {
		t.Errorf("List after \"a, b,,c\", \" \", \"d\" = %q, want a,b,c,d", got)
	}
}

func strconvItoa(n int) string { var s Size = Size(n); return s.String() }
func TestMain(m *testing.M)    { goleak.VerifyTestMain(m) }
