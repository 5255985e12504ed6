package ibdumpcli

import (
	"flag"
	"io"
)

// FlagNames lists every flag Run accepts, without the dash, so that tests
// (and ibtui's help) can check that the usage names them all.
func FlagNames() []string {
	var o options
	var names []string
	newFlagSet(&o, io.Discard).VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}
