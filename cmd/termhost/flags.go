package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// flagSet wraps flag.FlagSet so every flag has a TERMHOST_* environment
// equivalent, shown in --help.
type flagSet struct {
	*flag.FlagSet
	envErr error
}

func newFlagSet(name, summary string) *flagSet {
	fs := &flagSet{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError)}
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintf(out, "%s\n\nFlags (each also read from the environment variable shown):\n", summary)
		fs.VisitAll(func(f *flag.Flag) {
			name, usage := flag.UnquoteUsage(f)
			fmt.Fprintf(out, "  --%s %s\n      %s", f.Name, name, usage)
			if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "[]" {
				fmt.Fprintf(out, " (default %s)", f.DefValue)
			}
			fmt.Fprintf(out, " [$%s]\n", envName(f.Name))
		})
	}
	return fs
}

func envName(flagName string) string {
	return "TERMHOST_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parse reads the environment first, then the command line (which wins).
func (fs *flagSet) parse(args []string) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if v, ok := os.LookupEnv(envName(f.Name)); ok && err == nil {
			if e := f.Value.Set(v); e != nil {
				err = fmt.Errorf("$%s: %v", envName(f.Name), e)
			}
		}
	})
	if err != nil {
		return err
	}
	return fs.Parse(args)
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

// errHelp is returned by parse when --help was asked for (usage is printed).
var errHelp = flag.ErrHelp
