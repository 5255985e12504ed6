package parquetout

// AsyncMinProcs lets the external tests write row groups on the file's
// own goroutine (1) or on the caller's (a large number) on any machine.
var AsyncMinProcs = &asyncMinProcs
