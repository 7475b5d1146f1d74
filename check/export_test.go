package check

// V2Labels lends the external tests (package check_test) the corpus
// labels reader of v2_corpus_test.go.
var V2Labels = v2Labels
