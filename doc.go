// Package ibwire is the root of the ibwire module: a toolkit for RDMA
// traffic on the wire (the InfiniBand transport over RoCEv1, RoCEv2 and
// native IB links). The code lives in the packages below it; the README's
// package table says what each owns and may import, and this package's
// tests (policy_test.go) hold the repository to it: the import direction,
// gofmt, and that only layers registers with gopacket.
package ibwire
