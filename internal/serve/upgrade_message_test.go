package serve

import (
	"fmt"
	"regexp"
	"testing"
)

// checkUpgradeMessage checks termhost upgrade's report: it names process
// pid and both builds, upgrade-next and dev, which it tells apart.
func checkUpgradeMessage(t *testing.T, out string, pid int) {
	t.Helper()
	re := regexp.MustCompile(fmt.Sprintf(`process %d now runs upgrade-next \(binary ([0-9a-f]{12}), built [^)]*\), was dev \(binary ([0-9a-f]{12}), built `, pid))
	m := re.FindStringSubmatch(out)
	if m == nil || m[1] == m[2] {
		t.Fatalf("termhost upgrade said %q, want process %d now runs upgrade-next, was dev, each with its binary's own hash", out, pid)
	}
}
