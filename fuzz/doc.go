// Package fuzz holds the cross-package fuzz targets: capture bytes through
// the reader, the decoder and every output mode, as a user's file would go
// through ibdump. Per-package targets live beside their packages; make fuzz
// runs them all.
package fuzz
