// Package memx holds the byte copies the hot loops of the core share.
package memx

import "unsafe"

// WordCopySlack is the bytes WordCopy may write past the value's end.
const WordCopySlack = 16

// WordCopy copies src to dst in 16-byte words: it reads and writes up to
// 15 bytes past src's and the value's end, which the caller guarantees are
// there (cap is not checked: dst and src must have room). For values of a
// few dozen bytes it beats copy, which calls memmove for each.
func WordCopy(dst, src []byte) {
	if len(src) == 0 {
		return
	}
	Words(unsafe.Pointer(unsafe.SliceData(dst)), unsafe.Pointer(unsafe.SliceData(src)), len(src))
}

// Words copies the 16-byte words that cover n bytes from src to dst: it
// reads and writes up to 15 bytes past n, which the caller guarantees are
// there. With the same n for every value of a column the loop's exit is
// predicted; where n follows each value's length (WordCopy) it is not.
func Words(dst, src unsafe.Pointer, n int) {
	for k := 0; k < n; k += 16 {
		*(*[2]uint64)(unsafe.Add(dst, k)) = *(*[2]uint64)(unsafe.Add(src, k))
	}
}

// MaxFixedWords is the longest value a column's values are all copied as
// the same number of words for (FixedWords).
const MaxFixedWords = 48

// FixedWords is the bytes of whole 16-byte words (16, 32 or 48) that hold a
// column's longest value, when every value is to be copied as that many
// Words; 0 when longest is over MaxFixedWords, and values are copied as
// their own lengths need (CopyValue).
func FixedWords(longest int) int {
	if longest > MaxFixedWords {
		return 0
	}
	return max(16, (longest+15)&^15)
}

// CopyValue copies src[from:to] to dst: with WordCopy when src holds the
// bytes WordCopy reads past the value's end, else with copy. dst must have
// WordCopySlack bytes of room past the value.
func CopyValue(dst, src []byte, from, to int) {
	if from+(to-from+15)&^15 <= len(src) {
		WordCopy(dst, src[from:to])
	} else {
		copy(dst, src[from:to])
	}
}
