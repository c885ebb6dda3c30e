//go:build linux

// Package guardmem gives tests bytes that end where memory that may not be
// read begins, so that a hot loop reading past the end of its input faults
// instead of passing by luck. Only tests import it.
package guardmem

import (
	"syscall"
	"testing"
)

// Copy returns a copy of b that ends where a page that may not be
// accessed begins: a read past its end faults. The mapping is removed when
// the test ends.
func Copy(t testing.TB, b []byte) []byte {
	t.Helper()
	page := syscall.Getpagesize()
	size := (len(b)/page + 2) * page
	m, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Munmap(m) })
	if err := syscall.Mprotect(m[size-page:], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	out := m[size-page-len(b) : size-page : size-page]
	copy(out, b)
	return out
}
