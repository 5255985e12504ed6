// Package exchange holds the set-up steps ibpeer's programs and replay's
// compare mode share beyond the tools' own messages (package setup, a
// leaf over layers): ibpeer serve's region message, and perftest -R's RDMA
// CM connections, which need an endpoint device.
//
// ibpeer serve answers ibv_rc_pingpong's exchange and then sends a Region:
// rkey, VA and size of the connection's memory, its path MTU and receive
// buffers. Region, ParseRegion and ReadRegion are that message; serve
// writes it, its clients and replay's pingpong set-up read it.
//
// perftest -R runs its set-up exchange as SENDs over an RC QP that RDMA CM
// connects, then connects the data QP by RDMA CM to the same port.
// DialPerftestCM connects the set-up QP (as the client, or as the server
// accepting one client) and gives its message channel (Msg), on which
// setup.PerftestConn runs the messages; ConnectData connects the data QP;
// Disconnect ends both as perftest does, Abort at once.
package exchange
