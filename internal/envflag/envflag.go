// Package envflag is the flag set of every termhost subcommand: the
// standard library's flags, each with an environment variable twin that is
// read before the command line and shown in --help.
package envflag

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Set is the flag set of every subcommand. Each flag has an environment
// twin, read before the command line (which wins) and shown in --help:
// TERMHOST_<FLAG> for serve and bench, whose flags configure the server, and
// for the connection flags the client commands share; TERMHOST_<CMD>_<FLAG>
// for a client command's own flags, so that TERMHOST_CWD or TERMHOST_NAME
// meant for the server never leaks into "termhost run".
type Set struct {
	*flag.FlagSet
	envPrefix string          // the twin of flag "a-b" is envPrefix+"A_B"…
	shared    map[string]bool // …except for these, whose twin is TERMHOST_A_B
}

func New(name, envPrefix string) *Set {
	fs := &Set{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), envPrefix: envPrefix, shared: map[string]bool{}}
	fs.SetOutput(io.Discard) // errors are reported in one line; --help prints the usage
	return fs
}

// Share makes the twin of an already defined flag TERMHOST_<FLAG>.
func (fs *Set) Share(flagName string) { fs.shared[flagName] = true }

// EnvName is the environment twin of a flag.
func (fs *Set) EnvName(flagName string) string {
	prefix := fs.envPrefix
	if fs.shared[flagName] {
		prefix = "TERMHOST_"
	}
	return prefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// ParseWithEnv sets the flags from their twins (an empty variable counts
// as unset), then from args. It returns flag.ErrHelp for --help.
func (fs *Set) ParseWithEnv(args []string, getenv func(string) (string, bool)) error {
	if err := fs.SetFromEnv(getenv); err != nil {
		return err
	}
	return fs.Parse(args)
}

func (fs *Set) SetFromEnv(getenv func(string) (string, bool)) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if v, ok := getenv(fs.EnvName(f.Name)); ok && v != "" && err == nil {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("$%s: %w", fs.EnvName(f.Name), e)
			}
		}
	})
	return err
}

// IsSet reports whether a flag was given on the command line or by its twin.
func (fs *Set) IsSet(flagName string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == flagName })
	return set
}

// WriteFlags lists the flags with their defaults and twins.
func (fs *Set) WriteFlags(w io.Writer) {
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		if name != "" {
			name = " " + name
		}
		fmt.Fprintf(w, "  --%s%s\n      %s", f.Name, name, usage)
		switch f.DefValue {
		case "", "false", "0", "0s", "[]":
		default:
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintf(w, " [$%s]\n", fs.EnvName(f.Name))
	})
}

// ParseCommand parses the flags of serve or bench. On --help it writes
// about and the flags on stdout; on an error, one line on stderr. ok is false
// when the command should exit with code: 0 after --help, 2 (bad usage)
// after an error.
func ParseCommand(fs *Set, args []string, getenv func(string) (string, bool), stdout, stderr io.Writer, about string) (code int, ok bool) {
	err := fs.ParseWithEnv(args, getenv)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(stdout, "%s\n\nFlags (each also read from the environment variable shown; the command line wins):\n", about)
		fs.WriteFlags(stdout)
		return 0, false
	case err != nil:
		fmt.Fprintf(stderr, "termhost %s: %v (see termhost %s --help)\n", fs.Name(), err, fs.Name())
		return 2, false
	}
	return 0, true
}

// List is a repeatable or comma-separated string flag.
type List []string

func (l *List) String() string { return strings.Join(*l, ",") }
func (l *List) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

// Size accepts bytes with an optional KiB/MiB/GiB (or K/M/G) suffix.
type Size int

func (s *Size) String() string { return strconv.Itoa(int(*s)) }
func (s *Size) Set(v string) error {
	units := []struct {
		suffix string
		mult   int
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}}
	mult := 1
	for _, u := range units {
		if strings.HasSuffix(v, u.suffix) {
			v, mult = strings.TrimSuffix(v, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return fmt.Errorf("want a size like 1048576, 512KiB or 1MiB")
	}
	*s = Size(n * mult)
	return nil
}
