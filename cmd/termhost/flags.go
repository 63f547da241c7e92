package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// flagSet is the flag set of every subcommand. Each flag has an environment
// twin, read before the command line (which wins) and shown in --help:
// TERMHOST_<FLAG> for serve and bench, whose flags configure the server, and
// for the connection flags the client commands share; TERMHOST_<CMD>_<FLAG>
// for a client command's own flags, so that TERMHOST_CWD or TERMHOST_NAME
// meant for the server never leaks into "termhost run".
type flagSet struct {
	*flag.FlagSet
	envPrefix string          // the twin of flag "a-b" is envPrefix+"A_B"…
	shared    map[string]bool // …except for these, whose twin is TERMHOST_A_B
}

func newFlagSet(name, envPrefix string) *flagSet {
	fs := &flagSet{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), envPrefix: envPrefix, shared: map[string]bool{}}
	fs.SetOutput(io.Discard) // errors are reported in one line; --help prints the usage
	return fs
}

// share makes the twin of an already defined flag TERMHOST_<FLAG>.
func (fs *flagSet) share(flagName string) { fs.shared[flagName] = true }

// envName is the environment twin of a flag.
func (fs *flagSet) envName(flagName string) string {
	prefix := fs.envPrefix
	if fs.shared[flagName] {
		prefix = "TERMHOST_"
	}
	return prefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parse sets the flags from their twins (an empty variable counts as unset),
// then from args. It returns flag.ErrHelp for --help.
func (fs *flagSet) parse(args []string, getenv func(string) (string, bool)) error {
	if err := fs.setFromEnv(getenv); err != nil {
		return err
	}
	return fs.Parse(args)
}

func (fs *flagSet) setFromEnv(getenv func(string) (string, bool)) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if v, ok := getenv(fs.envName(f.Name)); ok && v != "" && err == nil {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("$%s: %w", fs.envName(f.Name), e)
			}
		}
	})
	return err
}

// isSet reports whether a flag was given on the command line or by its twin.
func (fs *flagSet) isSet(flagName string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == flagName })
	return set
}

// writeFlags lists the flags with their defaults and twins.
func (fs *flagSet) writeFlags(w io.Writer) {
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
		fmt.Fprintf(w, " [$%s]\n", fs.envName(f.Name))
	})
}

// parseServerFlags parses the flags of serve or bench. On --help it writes
// about and the flags on stdout; on an error, one line on stderr. ok is false
// when the command should exit with code.
func parseServerFlags(fs *flagSet, args []string, getenv func(string) (string, bool), stdout, stderr io.Writer, about string) (code int, ok bool) {
	err := fs.parse(args, getenv)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(stdout, "%s\n\nFlags (each also read from the environment variable shown; the command line wins):\n", about)
		fs.writeFlags(stdout)
		return exitOK, false
	case err != nil:
		fmt.Fprintf(stderr, "termhost %s: %v (see termhost %s --help)\n", fs.Name(), err, fs.Name())
		return exitUsage, false
	}
	return 0, true
}

// listFlag is a repeatable or comma-separated string flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

// sizeFlag accepts bytes with an optional KiB/MiB/GiB (or K/M/G) suffix.
type sizeFlag int

func (s *sizeFlag) String() string { return strconv.Itoa(int(*s)) }
func (s *sizeFlag) Set(v string) error {
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
	*s = sizeFlag(n * mult)
	return nil
}
