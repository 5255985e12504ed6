package dfilter_test

import (
	"errors"
	"fmt"

	"github.com/ibwire/ibwire/dfilter"
)

func ExampleCompile() {
	f, err := dfilter.Compile("bth.opcode in {4 6..10} and not aeth.syndrome.error_code == psn_seq_err")
	if err != nil {
		panic(err)
	}
	fmt.Println(f)
	for _, fd := range f.Fields() {
		fmt.Println(fd.Name)
	}
	// Output:
	// infiniband.bth.opcode in {4, 6..10} && !infiniband.aeth.syndrome.error_code == psn_seq_err
	// infiniband.bth.opcode
	// infiniband.aeth.syndrome.error_code
}

func ExampleSyntaxError_Caret() {
	expr := "bth.opcode == 4 && bth.psnn > 3"
	_, err := dfilter.Compile(expr)
	var se *dfilter.SyntaxError
	if errors.As(err, &se) {
		fmt.Println(err)
		fmt.Println(se.Caret(expr))
	}
	// Output:
	// dfilter: column 20: "bth.psnn" is neither a field nor a protocol name
	// bth.opcode == 4 && bth.psnn > 3
	//                    ^~~~~~~~
}

func ExampleComplete() {
	prefix := "ip.src == 10.0.0.1 && bth.opcode == RC_RDMA_READ_RESPONSE_"
	for _, s := range dfilter.Complete(prefix) {
		fmt.Println(prefix[:dfilter.TokenStart(prefix)] + s)
	}
	// Output:
	// ip.src == 10.0.0.1 && bth.opcode == RC_RDMA_READ_RESPONSE_FIRST
	// ip.src == 10.0.0.1 && bth.opcode == RC_RDMA_READ_RESPONSE_LAST
	// ip.src == 10.0.0.1 && bth.opcode == RC_RDMA_READ_RESPONSE_MIDDLE
	// ip.src == 10.0.0.1 && bth.opcode == RC_RDMA_READ_RESPONSE_ONLY
}
