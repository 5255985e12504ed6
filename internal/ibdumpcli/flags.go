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

// expandClusters turns getopt-style clusters, which tcpdump and tshark
// users type by habit, into flags the flag package knows: boolean letters
// (-nnvX is -n -n -v -X), a run of one letter that names a multi-letter flag
// (-vv, -xx, -XX, -tttt), and a letter that takes a value with the value
// attached or next (-c1 and -nc 1 are -c 1, -Tfields is -T fields, -r- is
// -r -). Go's own -name=value form and arguments of flags that take values
// are left alone.
func expandClusters(fs *flag.FlagSet, args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(a) < 3 || a[0] != '-' || a[1] == '-' || fs.Lookup(a[1:]) != nil || goNameValue(fs, a) {
			out = append(out, a)
			if takesValue(fs, a) && i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
			continue
		}
		parts, usedNext, ok := splitCluster(fs, a[1:], i+1 < len(args))
		if !ok {
			out = append(out, a)
			continue
		}
		out = append(out, parts...)
		if usedNext {
			i++
			out = append(out, args[i])
		}
	}
	return out
}

// splitCluster splits the letters of one cluster into flags. A letter that
// takes a value ends the cluster: the rest is its value, or when nothing is
// left (usedNext) the next argument is. ok is false when some letter is no
// flag, so the argument is passed on for the flag package to refuse.
func splitCluster(fs *flag.FlagSet, letters string, hasNext bool) (parts []string, usedNext, ok bool) {
	for j := 0; j < len(letters); {
		if takesValue(fs, "-"+letters[j:j+1]) {
			parts = append(parts, "-"+letters[j:j+1])
			if rest := letters[j+1:]; rest != "" {
				return append(parts, rest), false, true
			}
			return parts, hasNext, true
		}
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
			return nil, false, false
		}
		j = k
	}
	return parts, false, true
}

// flagsFirst moves the flags (with the values of those that take one)
// before the files, as GNU getopt permutes them: `ibdump f.pcap -Y nak`
// reads f.pcap with the filter, where the flag package would stop at the
// file and take -Y for a second one. A lone "-" (standard input) is a
// file; after "--" everything is.
func flagsFirst(fs *flag.FlagSet, args []string) []string {
	var flags, files []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			files = append(files, args[i+1:]...)
			i = len(args)
		case len(a) > 1 && a[0] == '-':
			flags = append(flags, a)
			if takesValue(fs, a) && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		default:
			files = append(files, a)
		}
	}
	if len(files) == 0 {
		return flags
	}
	return append(append(flags, "--"), files...)
}

// goNameValue reports Go's -name=value form for a defined flag (-c=1,
// -color=never), which is not a cluster.
func goNameValue(fs *flag.FlagSet, a string) bool {
	name, _, ok := strings.Cut(a[1:], "=")
	return ok && fs.Lookup(name) != nil
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
