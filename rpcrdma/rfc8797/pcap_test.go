package rfc8797

import (
	"path/filepath"
	"testing"

	"github.com/rdmashark/rdmashark/internal/pdtest"
)

// The real private data and the captures' set-up messages these tests
// read are internal/pdtest's, shared with pvtdata.

const pcapDir = "../../testdata/pcaps"

type setupPD = pdtest.SetupPD

var (
	unhex         = pdtest.Unhex
	rxeNFS3REQ    = pdtest.RxeNFS3REQ
	rxeNFS3REP    = pdtest.RxeNFS3REP
	siwNFS3MPAReq = pdtest.SiwNFS3MPAReq
	siwNFS3MPARep = pdtest.SiwNFS3MPARep
	rxeRpingREQ   = pdtest.RxeRpingREQ
	ipoibCMREQ    = pdtest.IPoIBCMREQ
)

func readSetupPD(t testing.TB, name string) []setupPD {
	return pdtest.ReadSetupPD(t, filepath.Join(pcapDir, name))
}

// prefixFor is the prefix a connection tracker passes to the framing.
func prefixFor(p setupPD) Prefix { return Prefix(p.Prefix()) }
