package cstream

import "testing"

// core/cimport reads the C structures through a mirror of their layout.
func TestLayoutMatchesC(t *testing.T) {
	if err := layoutMatches(); err != nil {
		t.Fatal(err)
	}
}
