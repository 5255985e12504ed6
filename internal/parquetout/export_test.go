package parquetout

// AsyncFlush lets the external tests write row groups on the caller's
// goroutine as well as on the file's own.
var AsyncFlush = &asyncFlush
