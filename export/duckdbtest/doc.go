// Package duckdbtest reads rdmashark's export with an independent reader,
// DuckDB (through its Go bindings, which need cgo), and checks that SQL over
// the tables reproduces what analyze reports. It is a module of its own so
// that the rdmashark module does not depend on DuckDB and its binary still
// builds with CGO_ENABLED=0; .ci/run runs its tests.
package duckdbtest
