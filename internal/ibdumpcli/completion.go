package ibdumpcli

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/ibwire/ibwire/decode"
)

// completion prints a shell completion script built from the flag set, with
// field names (from the registry) offered after -e and -Y. The scripts are
// written for ibdump and renamed to prog as a whole.
func completion(prog string, args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintf(stderr, "usage: %s completion bash|zsh|fish\n", prog)
		return exitError
	}
	realStdout := stdout
	var script strings.Builder
	stdout = &script
	defer func() { io.WriteString(realStdout, strings.ReplaceAll(script.String(), "ibdump", prog)) }()
	o := options{prog: prog}
	fs := newFlagSet(&o, io.Discard)
	var flags []string
	fs.VisitAll(func(f *flag.Flag) { flags = append(flags, "-"+f.Name) })
	sort.Strings(flags)
	var fields []string
	for _, f := range decode.Fields() {
		fields = append(fields, f.Name)
	}
	switch args[0] {
	case "bash":
		fmt.Fprintf(stdout, `# bash completion for ibdump; load with: source <(ibdump completion bash)
_ibdump() {
    local cur prev
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"
    case "$prev" in
        -e|-Y) COMPREPLY=( $(compgen -W "%s" -- "$cur") ); return ;;
        -T) COMPREPLY=( $(compgen -W "text fields json jsonl ek" -- "$cur") ); return ;;
        -F) COMPREPLY=( $(compgen -W "pcap pcapng" -- "$cur") ); return ;;
        -z) COMPREPLY=( $(compgen -W "conv,qp expert latency opcodes endpoints,gid io,stat, follow,qp,ascii, follow,qp,hex, pfc dcqcn doctor" -- "$cur") ); return ;;
        --color|-color) COMPREPLY=( $(compgen -W "auto always never" -- "$cur") ); return ;;
        -r|-w) COMPREPLY=( $(compgen -f -- "$cur") ); return ;;
    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=( $(compgen -W "%s" -- "$cur") )
    else
        COMPREPLY=( $(compgen -f -- "$cur") )
    fi
}
complete -F _ibdump ibdump
`, strings.Join(fields, " "), strings.Join(flags, " "))
	case "zsh":
		fmt.Fprintf(stdout, `#compdef ibdump
# zsh completion for ibdump; load with: source <(ibdump completion zsh)
_ibdump() {
  local -a flags fields
  flags=(%s)
  fields=(%s)
  case "${words[CURRENT-1]}" in
    -e|-Y) compadd -a fields; return ;;
    -T) compadd text fields json jsonl ek; return ;;
    -F) compadd pcap pcapng; return ;;
    -r|-w) _files; return ;;
  esac
  if [[ "$PREFIX" == -* ]]; then compadd -a flags; else _files; fi
}
compdef _ibdump ibdump
`, strings.Join(flags, " "), strings.Join(fields, " "))
	case "fish":
		fmt.Fprintln(stdout, "# fish completion for ibdump; load with: ibdump completion fish | source")
		fs.VisitAll(func(f *flag.Flag) {
			usage := strings.ReplaceAll(strings.SplitN(f.Usage, "\n", 2)[0], "'", `\'`)
			fmt.Fprintf(stdout, "complete -c ibdump -o '%s' -d '%s'\n", f.Name, usage)
		})
		fmt.Fprintf(stdout, "complete -c ibdump -o e -x -a '%s'\n", strings.Join(fields, " "))
		fmt.Fprintf(stdout, "complete -c ibdump -o T -x -a 'text fields json jsonl ek'\n")
	default:
		fmt.Fprintf(stderr, "%s completion: unknown shell %q (bash, zsh or fish)\n", prog, args[0])
		return exitError
	}
	return exitOK
}
