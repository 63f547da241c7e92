package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// process reads a server process's CPU time and resident memory from /proc.
type process struct {
	pid int // 0 = this process
}

func (p process) dir() string {
	if p.pid == 0 {
		return "/proc/self"
	}
	return "/proc/" + strconv.Itoa(p.pid)
}

// clockTicks is USER_HZ, 100 on every Linux architecture Go supports.
const clockTicks = 100

// cpu returns utime+stime in seconds.
func (p process) cpu() (float64, error) {
	b, err := os.ReadFile(p.dir() + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; fields count from after ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("bad %s/stat", p.dir())
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("bad %s/stat", p.dir())
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	st, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("bad %s/stat", p.dir())
	}
	return float64(ut+st) / clockTicks, nil
}

// rss returns the resident set size in bytes: VmRSS of /proc/<pid>/status,
// what a process monitor shows. Nothing is collected first: the figure
// holds the garbage and freed memory a running server holds too.
func (p process) rss() (int64, error) {
	b, err := os.ReadFile(p.dir() + "/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("bad VmRSS in %s/status: %w", p.dir(), err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS in %s/status", p.dir())
}

// findServer finds the process listening on the server URL's port on this
// machine: the socket's inode in /proc/net/tcp{,6}, then the process holding it.
func findServer(u *url.URL) (int, error) {
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443"}[u.Scheme]
		if port == "" {
			port = "80"
		}
	}
	pn, err := strconv.Atoi(port)
	if err != nil {
		return 0, err
	}
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fl := strings.Fields(sc.Text())
			if len(fl) < 10 || fl[3] != "0A" { // LISTEN
				continue
			}
			_, hexPort, ok := strings.Cut(fl[1], ":")
			if p, err := strconv.ParseInt(hexPort, 16, 32); ok && err == nil && int(p) == pn {
				inodes["socket:["+fl[9]+"]"] = true
			}
		}
		_ = f.Close()
	}
	if len(inodes) == 0 {
		return 0, fmt.Errorf("nothing listens on port %d on this machine", pn)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range procs {
		if link, err := os.Readlink(fd); err == nil && inodes[link] {
			pid, _ := strconv.Atoi(strings.Split(fd, "/")[2])
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no visible process holds port %d (pass --pid)", pn)
}
