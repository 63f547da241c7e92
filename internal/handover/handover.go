// Package handover moves a running termhost's descriptors and state to its
// successor over a Unix socket: descriptors as SCM_RIGHTS, then a JSON
// message, each side's messages length-prefixed. It knows nothing of
// terminals; cmd/termhost says what is sent.
package handover

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// EnvFD names the environment variable that tells a new termhost the
// descriptor of its end of the hand-over socket.
const EnvFD = "TERMHOST_HANDOVER_FD"

// maxBatch keeps each SCM_RIGHTS message under the kernel's limit (253).
const maxBatch = 200

// maxMessage bounds a JSON message (contents and replay rings of every
// terminal).
const maxMessage = 1 << 30

// Pair returns a connected socket pair: ours, and the child's end as a file
// for exec.Cmd.ExtraFiles (close it once the child has started).
func Pair() (*net.UnixConn, *os.File, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	ours := os.NewFile(uintptr(fds[0]), "handover")
	defer ours.Close() // FileConn dups it
	c, err := net.FileConn(ours)
	if err != nil {
		_ = unix.Close(fds[1])
		return nil, nil, fmt.Errorf("handover conn: %w", err)
	}
	return c.(*net.UnixConn), os.NewFile(uintptr(fds[1]), "handover-child"), nil
}

// Inherited returns the socket named by EnvFD, or nil when this process was
// not started by a hand-over. It unsets the variable so that shells do not
// inherit it.
func Inherited() (*net.UnixConn, error) {
	v, ok := os.LookupEnv(EnvFD)
	if !ok {
		return nil, nil
	}
	_ = os.Unsetenv(EnvFD)
	var fd int
	if _, err := fmt.Sscan(v, &fd); err != nil || fd < 3 {
		return nil, fmt.Errorf("%s=%q: not a descriptor", EnvFD, v)
	}
	unix.CloseOnExec(fd)
	f := os.NewFile(uintptr(fd), "handover")
	defer f.Close()
	c, err := net.FileConn(f)
	if err != nil {
		return nil, fmt.Errorf("handover conn: %w", err)
	}
	uc, ok := c.(*net.UnixConn)
	if !ok {
		_ = c.Close()
		return nil, fmt.Errorf("%s: not a Unix socket", EnvFD)
	}
	return uc, nil
}

// WriteJSON sends v as one length-prefixed JSON message.
func WriteJSON(c *net.UnixConn, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("handover encode: %w", err)
	}
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	if _, err := c.Write(append(n[:], b...)); err != nil {
		return fmt.Errorf("handover write: %w", err)
	}
	return nil
}

// ReadJSON reads one message of WriteJSON into v.
func ReadJSON(c *net.UnixConn, v any) error {
	var n [8]byte
	if _, err := io.ReadFull(c, n[:]); err != nil {
		return fmt.Errorf("handover read: %w", err)
	}
	size := binary.BigEndian.Uint64(n[:])
	if size > maxMessage {
		return fmt.Errorf("handover read: message of %d bytes", size)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(c, b); err != nil {
		return fmt.Errorf("handover read: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("handover decode: %w", err)
	}
	return nil
}

// WriteFDs sends descriptors: their count, then batches of one byte each
// carrying SCM_RIGHTS. The receiver gets duplicates; ours stay open.
func WriteFDs(c *net.UnixConn, fds []int) error {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(fds)))
	if _, err := c.Write(n[:]); err != nil {
		return fmt.Errorf("handover write: %w", err)
	}
	for len(fds) > 0 {
		batch := fds[:min(len(fds), maxBatch)]
		fds = fds[len(batch):]
		if _, _, err := c.WriteMsgUnix([]byte{'F'}, unix.UnixRights(batch...), nil); err != nil {
			return fmt.Errorf("handover send descriptors: %w", err)
		}
	}
	return nil
}

// ReadFDs receives what WriteFDs sent. The descriptors are close-on-exec.
// On error, those received so far are closed.
func ReadFDs(c *net.UnixConn) (fds []int, err error) {
	defer func() {
		if err != nil {
			for _, fd := range fds {
				_ = unix.Close(fd)
			}
			fds = nil
		}
	}()
	var n [4]byte
	if _, err := io.ReadFull(c, n[:]); err != nil {
		return nil, fmt.Errorf("handover read: %w", err)
	}
	want := int(binary.BigEndian.Uint32(n[:]))
	for len(fds) < want {
		batch := min(want-len(fds), maxBatch)
		oob := make([]byte, unix.CmsgSpace(batch*4))
		buf := make([]byte, 1)
		_, oobn, flags, _, err := c.ReadMsgUnix(buf, oob)
		if err != nil {
			return fds, fmt.Errorf("handover receive descriptors: %w", err)
		}
		got, err := parseRights(oob[:oobn])
		fds = append(fds, got...)
		if err != nil {
			return fds, err
		}
		if flags&unix.MSG_CTRUNC != 0 || len(got) != batch {
			return fds, errors.New("handover receive descriptors: truncated")
		}
	}
	return fds, nil
}

func parseRights(oob []byte) ([]int, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, fmt.Errorf("handover control message: %w", err)
	}
	var fds []int
	for _, m := range msgs {
		got, err := unix.ParseUnixRights(&m)
		if err != nil {
			return fds, fmt.Errorf("handover rights: %w", err)
		}
		for _, fd := range got {
			unix.CloseOnExec(fd)
		}
		fds = append(fds, got...)
	}
	return fds, nil
}
