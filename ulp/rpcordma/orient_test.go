package rpcordma_test

import (
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/internal/ulptest"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// TestSenderAllocatesNothing: the Orienter is on the per-packet path
// (dissect/orient.go); rxe-nfs3.pcap's packets, Calls and Replies among
// them, are read without an allocation.
func TestSenderAllocatesNothing(t *testing.T) {
	ulptest.SenderAllocates(t, "rxe-nfs3.pcap", rpcordma.New(nfs.NewBinding(), nfs.RDMAPort).(dissect.Orienter))
}

// TestOrientedWithoutSetUp: rxe-nfs3.pcap without its CM exchange and
// every frame before the first ACK of the server (then of the client):
// RPC-over-RDMA alone settles the roles as the CM REQs name them
// (ulptest.Oriented).
func TestOrientedWithoutSetUp(t *testing.T) {
	ulptest.Oriented(t, "rxe-nfs3.pcap", func() []dissect.ULP { return []dissect.ULP{rpcordma.New(nfs.NewBinding(), nfs.RDMAPort)} })
}
