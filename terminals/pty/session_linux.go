package pty

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// signalSession sends sig to the process group sid and to every process whose
// session is sid: interactive shells put jobs in their own process groups, and
// none of them may outlive the terminal.
func signalSession(sid int, sig syscall.Signal) {
	_ = syscall.Kill(-sid, sig)
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == sid {
			continue
		}
		if processSession(pid) == sid {
			_ = syscall.Kill(pid, sig)
		}
	}
}

// processSession reads field 6 (session) of /proc/<pid>/stat.
func processSession(pid int) int {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')') // the command name may contain spaces
	if i < 0 {
		return -1
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 4 {
		return -1
	}
	sid, err := strconv.Atoi(f[3])
	if err != nil {
		return -1
	}
	return sid
}
