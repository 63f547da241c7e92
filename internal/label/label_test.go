package label

import (
	"encoding/json"
	"os"
	"testing"
)

// TestClean replays the cases the browser's copy passes too.
func TestClean(t *testing.T) {
	b, err := os.ReadFile("testdata/clean.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases [][2]string
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if got := Clean(c[0]); got != c[1] {
			t.Errorf("Clean(%q) = %q, want %q", c[0], got, c[1])
		}
	}
}

func TestReserved(t *testing.T) {
	for _, name := range []string{"Owner", "owner", "OWNER", " Owner ", "Own\u200Ber", "\u041ewner", "Οwner", "0wner", "Ovvner",
		"O\u0301wner", "Ｏｗｎｅｒ", "Owner\u202e", "You", "termhost CLI", "termhost-cli", "Agent", "Agent · Claude Code", "Unnamed viewer link"} {
		if !Reserved(name) {
			t.Errorf("Reserved(%q) = false, want true", name)
		}
	}
	for _, name := range []string{"Alice Smith", "Owen", "Owners club", "王小明", "山田太郎さ", "bob@corp.com", "Agenda", ""} {
		if Reserved(name) {
			t.Errorf("Reserved(%q) = true, want false", name)
		}
	}
	if got := Distinct("Owner", "alice@corp.test"); got != "Owner (alice@corp.test)" {
		t.Errorf("Distinct(Owner) = %q", got)
	}
	if got := Distinct("Alice", "alice@corp.test"); got != "Alice" {
		t.Errorf("Distinct(Alice) = %q", got)
	}
}
