// Package tlstest makes throwaway certificate authorities for tests: a CA
// and certificates it signs, written as PEM files into the test's
// temporary directory. Keys are generated on every run and never
// committed.
package tlstest
