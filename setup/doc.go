// Package setup speaks the set-up exchanges that the standard RDMA test
// tools run before any RoCE packet moves, and that ibwire both takes part in
// (ibpeer as either side) and reads out of captures (decode pairs a
// connection's two directions by them; replay rewrites them along with the
// traffic).
//
// ibv_*_pingpong and perftest open a TCP connection (DefaultPort, 18515),
// the client writes first, and both swap fixed-size text messages naming
// their QP number, first PSN and GID, plus the R_Key and address of a
// region for perftest: PingpongDest and PerftestDest are those messages,
// byte for byte as the C tools write them, and parsed as leniently as
// their sscanf reads them (a malformed one is a *SyntaxError naming the
// field and byte). perftest's session has more steps around its messages
// (versions, buffer sizes, MTU, handshakes around the traffic, the
// bandwidth reports): PerftestConn runs them in either role, one step at a
// time or as Open and Finish; perftest -R runs the same session over an
// RDMA CM connection with the messages in binary (NewPerftestConnRDMACM).
// PingpongClient and PingpongServer run the pingpong exchange whole.
// ibpeer serve answers the pingpong exchange and then sends a ServeRegion
// (rkey, address and size of the connection's memory, its path MTU and
// receive buffers), which its clients and replay's set-up read.
//
// Nothing here sets deadlines: the C tools wait forever, so the caller
// bounds an exchange with the connection's deadline or by closing it. The
// package knows messages and steps only; what a side does between them
// (creating and connecting QPs) is its caller's.
package setup
