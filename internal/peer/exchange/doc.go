// Package exchange holds the set-up steps ibpeer's programs and replay's
// compare mode share that need an endpoint device, beyond the tools' own
// messages (package setup, a leaf over layers): perftest -R's RDMA CM
// connections, and how long any set-up exchange may take (SetupTimeout).
//
// perftest -R runs its set-up exchange as SENDs over an RC QP that RDMA CM
// connects, then connects the data QP by RDMA CM to the same port.
// DialPerftestCM connects the set-up QP (as the client, or as the server
// accepting one client) and gives its message channel (Msg), on which
// setup.PerftestConn runs the messages; ConnectData connects the data QP;
// Disconnect ends both as perftest does, Abort at once.
package exchange
