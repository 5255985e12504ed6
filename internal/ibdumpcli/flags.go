package ibdumpcli

import (
	"flag"
	"fmt"
	"strings"
)

// listFlag collects a repeatable flag (-e, -E, -z, -d, -O).
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// countFlag counts how often a boolean flag was given (-v -v).
type countFlag int

func (c *countFlag) String() string   { return fmt.Sprint(int(*c)) }
func (c *countFlag) Set(string) error { *c++; return nil }
func (c *countFlag) IsBoolFlag() bool { return true }

// expandClusters turns getopt-style clusters of boolean letters, which
// tcpdump users type by habit (-nnvX), into flags the flag package knows
// (-n -n -v -X). A run of one letter becomes a multi-letter flag when one is
// defined (-vv, -xx, -XX, -tttt). Arguments of flags that take values are
// left alone.
func expandClusters(fs *flag.FlagSet, args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(a) < 3 || a[0] != '-' || a[1] == '-' || fs.Lookup(a[1:]) != nil || strings.ContainsRune(a, '=') {
			out = append(out, a)
			if takesValue(fs, a) && i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
			continue
		}
		letters := a[1:]
		var parts []string
		ok := true
		for j := 0; j < len(letters); {
			k := j
			for k < len(letters) && letters[k] == letters[j] {
				k++
			}
			run := letters[j:k]
			switch {
			case fs.Lookup(run) != nil && isBool(fs, run):
				parts = append(parts, "-"+run)
			case fs.Lookup(run[:1]) != nil && isBool(fs, run[:1]):
				for range run {
					parts = append(parts, "-"+run[:1])
				}
			default:
				ok = false
			}
			j = k
		}
		if !ok {
			out = append(out, a)
			continue
		}
		out = append(out, parts...)
	}
	return out
}

func isBool(fs *flag.FlagSet, name string) bool {
	f := fs.Lookup(name)
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// takesValue reports whether arg is a flag whose value is the next argument.
func takesValue(fs *flag.FlagSet, arg string) bool {
	name := strings.TrimLeft(arg, "-")
	if strings.ContainsRune(name, '=') {
		return false
	}
	f := fs.Lookup(name)
	return f != nil && !isBool(fs, name)
}
