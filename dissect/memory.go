package dissect

// Memory is what every ULP needs of the remote memory its requests
// advertise: an RPC Call's chunk segments (RFC 8166 section 3.4.3), an NVMe
// command's keyed SGL data blocks (NVMe over Fabrics 1.1 section 7.3.2,
// NVMe Base 2.0 section 4.1.2.2), an iSER task's STags, an SMB2 request's
// buffer descriptors. The requester exposes memory and only the responder
// initiates RDMA against it (RFC 8166 section 3.4.1, RFC 5040 section
// 2.4): an RDMA operation requested in one direction serves a request sent
// the other way. Memory indexes the regions of the requests outstanding on
// one connection by STag (R_Key), and answers the questions the neutral
// rules ask:
//
//   - Find: which outstanding request advertised the region an RDMA Read
//     or Write moved bytes of (the latest, among several with the STag);
//   - Retired: whether the region belonged to a request already answered
//     (RDMA after the response: RFC 8166 section 3.6, NVMe over Fabrics
//     section 7.3.3);
//   - Owner: which outstanding request advertised an STag a Send With
//     Invalidate invalidated;
//   - Unknown: whether a request whose regions did not decode is
//     outstanding (the operation may well be its).
//
// O is the ULP's request type (*Transaction for RPC-over-RDMA). A Memory
// is a value: the zero Memory is empty and ready to use.
type Memory[O comparable] struct {
	byTag map[uint32][]regionRef[O]
	spare [][]regionRef[O] // emptied slices of byTag, for reuse
	// retired remembers the first regions of the last requests answered,
	// the latest last.
	retired  [RetiredRequests]Retired
	nretired int
	// unknown remembers, per requester direction, the keys of the last
	// requests whose regions did not decode.
	unknown [2]keyRing
}

// Region is one advertised memory region.
type Region struct {
	STag   uint32
	Offset uint64 // its address (RDMA: the virtual address or tagged offset)
	Length uint32
	// Read: the responder pulls it by RDMA Read (an RPC Read or Call
	// chunk, NVMe host-to-controller data); else it fills it by RDMA
	// Write.
	Read bool
}

// Holds reports whether the region holds [off, off+n).
func (r *Region) Holds(off uint64, n uint32) bool {
	return off >= r.Offset && off+uint64(n) <= r.Offset+uint64(r.Length)
}

// RegionRef is a region as its request advertised it: the request, the
// direction the request went, and the ULP's own indexes of the region in
// it (RPC: chunk and segment; NVMe: the SGL descriptor).
type RegionRef[O comparable] struct {
	Owner     O
	Requester Direction
	I, J      int32
}

type regionRef[O comparable] struct {
	RegionRef[O]
	r Region
}

// RetiredRequests bounds the answered requests Memory remembers.
const RetiredRequests = 32

// retiredMaxRegions bounds the regions remembered of each.
const retiredMaxRegions = 4

// Retired is an answered request as Memory remembers it.
type Retired struct {
	requester      Direction
	key            uint64
	responsePacket int
	regions        [retiredMaxRegions]struct{ stag, lo, hi uint64 }
	n              int
}

// keyRing is a small set of keys, the oldest overwritten when full.
type keyRing struct {
	keys [16]uint64
	n    int
}

func (r *keyRing) add(k uint64) {
	r.keys[r.n%len(r.keys)] = k
	r.n++
}

func (r *keyRing) size() int { return min(r.n, len(r.keys)) }

func (r *keyRing) remove(k uint64) bool {
	n := r.size()
	for i := 0; i < n; i++ {
		if r.keys[i] == k {
			// Swap the last kept in; the ring becomes a plain slice.
			r.keys[i] = r.keys[n-1]
			r.n = n - 1
			return true
		}
	}
	return false
}

// Advertise indexes region r of request o, sent in direction requester;
// i and j are the ULP's indexes of the region in o.
func (m *Memory[O]) Advertise(o O, requester Direction, i, j int32, r Region) {
	if m.byTag == nil {
		m.byTag = map[uint32][]regionRef[O]{}
	}
	refs, ok := m.byTag[r.STag]
	if !ok && len(m.spare) > 0 {
		refs, m.spare = m.spare[len(m.spare)-1], m.spare[:len(m.spare)-1]
	}
	m.byTag[r.STag] = append(refs, regionRef[O]{RegionRef[O]{o, requester, i, j}, r})
}

// Withdraw drops o's regions with STag stag from the index (call it once
// per STag o advertised).
func (m *Memory[O]) Withdraw(o O, stag uint32) {
	refs := m.byTag[stag]
	out := refs[:0]
	for _, r := range refs {
		if r.Owner != o {
			out = append(out, r)
		}
	}
	// Usually one: a loop, not clear's call of memclrHasPointers.
	for i := len(out); i < len(refs); i++ {
		refs[i] = regionRef[O]{}
	}
	if len(out) == 0 {
		delete(m.byTag, stag)
		if cap(out) > 0 && len(m.spare) < 256 {
			m.spare = append(m.spare, out)
		}
	} else {
		m.byTag[stag] = out
	}
}

// Find returns the region op moved bytes of: advertised by the latest
// outstanding request sent the other way than op's request, with op's
// STag, of op's kind (Read regions for an RDMA Read), holding op's range.
func (m *Memory[O]) Find(op *RDMAOp) (RegionRef[O], bool) {
	requester := opposite(op.Dir)
	refs := m.byTag[op.STag]
	for i := len(refs) - 1; i >= 0; i-- {
		r := &refs[i]
		if r.Requester != requester || r.r.Read != (op.Kind == RDMARead) || !r.r.Holds(op.Offset, op.Length) {
			continue
		}
		return r.RegionRef, true
	}
	return RegionRef[O]{}, false
}

// Owner returns the latest outstanding request sent in direction
// requester, other than not, that advertised stag.
func (m *Memory[O]) Owner(stag uint32, requester Direction, not O) (O, bool) {
	refs := m.byTag[stag]
	for i := len(refs) - 1; i >= 0; i-- {
		if r := &refs[i]; r.Owner != not && r.Requester == requester {
			return r.Owner, true
		}
	}
	var zero O
	return zero, false
}

// Retire remembers that the request with key, sent in direction
// requester, was answered at responsePacket (0: it ended without a
// response); Add its regions to the Retired it returns (the first few are
// kept): an RDMA operation on them later is "after the response". It does
// not withdraw them.
func (m *Memory[O]) Retire(requester Direction, key uint64, responsePacket int) *Retired {
	r := &m.retired[m.nretired%RetiredRequests]
	m.nretired++
	*r = Retired{requester: requester, key: key, responsePacket: responsePacket}
	return r
}

// Add remembers one more region of a retired request, reporting false
// when no more are kept.
func (r *Retired) Add(g Region) bool {
	if r.n == retiredMaxRegions {
		return false
	}
	r.regions[r.n] = struct{ stag, lo, hi uint64 }{uint64(g.STag), g.Offset, g.Offset + uint64(g.Length)}
	r.n++
	return true
}

// Retired returns the key and response packet of the latest answered
// request that advertised the region op moved bytes of.
func (m *Memory[O]) Retired(op *RDMAOp) (key uint64, responsePacket int, ok bool) {
	requester := opposite(op.Dir)
	n := min(m.nretired, RetiredRequests)
	end := op.Offset + uint64(op.Length)
	for i := 0; i < n; i++ {
		r := &m.retired[(m.nretired-1-i)%RetiredRequests] // the latest first
		if r.requester != requester {
			continue
		}
		for _, g := range r.regions[:r.n] {
			if g.stag == uint64(op.STag) && op.Offset >= g.lo && end <= g.hi {
				return r.key, r.responsePacket, true
			}
		}
	}
	return 0, 0, false
}

// Unknown remembers a request with key, sent in direction requester, whose
// regions did not decode.
func (m *Memory[O]) Unknown(requester Direction, key uint64) { m.unknown[requester.Index()].add(key) }

// Known forgets an unknown request (its response came), reporting whether
// it was one.
func (m *Memory[O]) Known(requester Direction, key uint64) bool {
	return m.unknown[requester.Index()].remove(key)
}

// HasUnknown reports whether a request sent in direction requester whose
// regions did not decode may still be outstanding.
func (m *Memory[O]) HasUnknown(requester Direction) bool {
	return m.unknown[requester.Index()].size() > 0
}

// Regions returns the number of regions indexed, for the accounting of
// what a connection holds.
func (m *Memory[O]) Regions() int {
	n := 0
	for _, refs := range m.byTag {
		n += len(refs)
	}
	return n
}

// Unattached says why no outstanding request explains op (Find found
// none), the same way for every ULP: its memory is that of a request
// already answered (after the response; unless op is incomplete where the
// capture lost packets, so that when it ended is unknown); a request
// whose regions did not decode is outstanding the other way (it may be
// its); the capture lost requests it may belong to (RDMAOp.EvidenceLost);
// else no request advertised it.
func (m *Memory[O]) Unattached(op *RDMAOp) OpAttachment {
	a := OpAttachment{Reason: UnattachedNoRegion}
	gap, lost := op.EvidenceLost()
	if key, reply, ok := m.Retired(op); ok {
		a = OpAttachment{Reason: UnattachedAfterResponse, Key: uint32(key), ResponsePacket: reply}
		if lost && !op.Complete {
			a.Reason, a.GapPacket = UnattachedCaptureGap, gap
		} else if n, ok := op.spanLost(); ok {
			// The capture lost packets while it went on (its packets'
			// order is then the order reassembly could hand them up
			// in, not the wire's).
			a.Reason, a.GapPacket = UnattachedCaptureGap, n
		}
	} else if m.HasUnknown(opposite(op.Dir)) {
		a.Reason = UnattachedRequestUnknown
	} else if lost {
		a.Reason, a.GapPacket = UnattachedCaptureGap, gap
	}
	return a
}
