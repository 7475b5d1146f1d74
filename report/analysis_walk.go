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

// SpillConnsAfter sets how many released connections a ConnSpill keeps in
// memory before it writes the others out (64), and returns what it was:
// for the tests of packages that draw the document, so that a small
// capture exercises the spill.
func SpillConnsAfter(n int) int {
	old := spillConnsAfter
	spillConnsAfter = n
	return old
}
