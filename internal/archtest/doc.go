// Package archtest holds the tests of the architecture's import rules
// (DEVELOPERS.md "Who may import whom", docs/architecture.md): they read
// every non-test source file of the module and fail on an import the rules
// forbid. It has no code of its own.
package archtest
