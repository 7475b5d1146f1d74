// Package fields is rdmashark's presentation of the engine's model, the
// tshark-compatible view of a packet: the field registry (Registry, built
// once from one Table per protocol in the fields_*.go files), how values are
// printed (Field.Format, AppendFormat, Display), the summary line's columns
// and Info text (Info, AppendInfo, InfoLines, Source, Destination,
// Protocol), and the display-filter view of the registry (FilterRegistry,
// what dfilter.Compile is given).
//
// It imports dissect's model and reads it only; dissect never imports it
// (DEVELOPERS.md "Who may import whom"; imports_test.go holds the rule).
// report, export and cmd/rdmashark print packets through it.
package fields
