package endpoint_test

import (
	"context"
	"fmt"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/endpoint/wiretest"
	"github.com/ibwire/ibwire/layers"
)

// Two endpoints joined by an in-memory wire pair: the client RDMA WRITEs a
// message into the server's memory region.
func Example() {
	clientWire, serverWire := wiretest.NewPair(wiretest.Config{})
	client, server := endpoint.NewDevice(clientWire), endpoint.NewDevice(serverWire)
	defer client.Close()
	defer server.Close()

	// The server registers memory a peer may write.
	spd := server.AllocPD()
	smem := make([]byte, 4096)
	smr, _ := spd.RegMR(smem, endpoint.AccessLocalWrite|endpoint.AccessRemoteWrite)
	scq := server.CreateCQ(16)
	sqp, _ := spd.CreateQP(endpoint.QPConfig{Type: endpoint.RC, SendCQ: scq, RecvCQ: scq})

	// The client has the data.
	cpd := client.AllocPD()
	cmem := []byte("hello, RDMA")
	cmr, _ := cpd.RegMR(cmem, 0)
	ccq := client.CreateCQ(16)
	cqp, _ := cpd.CreateQP(endpoint.QPConfig{Type: endpoint.RC, SendCQ: ccq, RecvCQ: ccq})

	// What an out-of-band exchange would carry: address, QPN, first PSN
	// (and for the writer, the server region's address and rkey).
	clientPSN, serverPSN := layers.PSN(100), layers.PSN(200)
	if err := sqp.Connect(endpoint.ConnectAttr{Remote: client.GID().Addr(), RemoteQPN: cqp.QPN(),
		RemotePSN: clientPSN, LocalPSN: serverPSN, MTU: layers.MTU1024}); err != nil {
		panic(err)
	}
	if err := cqp.Connect(endpoint.ConnectAttr{Remote: server.GID().Addr(), RemoteQPN: sqp.QPN(),
		RemotePSN: serverPSN, LocalPSN: clientPSN, MTU: layers.MTU1024}); err != nil {
		panic(err)
	}

	err := cqp.PostSend(&endpoint.SendWR{ID: 1, Op: endpoint.WRWrite, SGL: []endpoint.SGE{cmr.SGE(0, len(cmem))},
		RemoteAddr: smr.Addr() + 16, RKey: smr.RKey()})
	if err != nil {
		panic(err)
	}
	wc := make([]endpoint.WC, 1)
	if _, err := ccq.Wait(context.Background(), wc); err != nil {
		panic(err)
	}
	fmt.Println(wc[0].Op, wc[0].Status, wc[0].ByteLen)
	fmt.Printf("%q\n", smem[16:16+len(cmem)])
	fmt.Println(server.GID())
	// Output:
	// RDMA_WRITE SUCCESS 11
	// "hello, RDMA"
	// ::ffff:127.0.0.2
}
