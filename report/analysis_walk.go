package report

// The walks other packages draw the analyze document with (report/html):
// the connections and findings the spill took are read back one at a
// time, as analyze's own outputs read them (analyze_spill.go).

// EachConnection calls fn with every connection of the document in ID
// order and its findings; a connection the spill took is read back into a
// Connection and findings that fn must not keep past its call. An error
// reading one back stops the walk and is returned, as is fn's.
func (a *Analysis) EachConnection(fn func(c *Connection, fs []Finding) error) error {
	return a.eachConn(fn)
}

// EachFinding calls fn with every finding in the document's order (those
// of no connection, then each connection's, as Findings holds them
// without a spill); fn must not keep f past its call.
func (a *Analysis) EachFinding(fn func(f *Finding) error) error {
	return a.eachFinding(fn)
}

// EachConnectionAndFinding is EachConnection and EachFinding in one walk:
// one read of the spill's file, not two. finding is called with every
// finding in EachFinding's order, conn with every connection as
// EachConnection calls it, before finding is called with any of that
// connection's findings (those fs holds). Neither may keep what it is
// given past its call.
func (a *Analysis) EachConnectionAndFinding(conn func(c *Connection, fs []Finding) error, finding func(f *Finding) error) error {
	if a.spill == nil || a.spill.Len() == 0 {
		// The document is in memory: nothing to read back, the two walks
		// cost no more than one (and keep eachFinding's order as is).
		if err := a.eachConn(conn); err != nil {
			return err
		}
		return a.eachFinding(finding)
	}
	// eachFinding's order with a spill: those of no connection, then each
	// connection's.
	for i := range a.Findings {
		if a.Findings[i].Connection != 0 {
			break
		}
		if err := finding(&a.Findings[i]); err != nil {
			return err
		}
	}
	return a.eachConn(func(c *Connection, fs []Finding) error {
		if err := conn(c, fs); err != nil {
			return err
		}
		for i := range fs {
			if err := finding(&fs[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// SpillConnsAfter sets how many released connections a ConnSpill keeps in
// memory before it writes the others out (64), and returns what it was:
// for the tests of packages that draw the document, so that a small
// capture exercises the spill.
func SpillConnsAfter(n int) int {
	old := spillConnsAfter
	spillConnsAfter = n
	return old
}
