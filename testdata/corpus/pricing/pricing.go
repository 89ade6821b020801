// Package pricing prices a cart: CPU-bound work that never blocks, the
// shape of a service's pricing or rules engine (issue #36: a gin service's
// 3 ms pricing.Compute showed only as "running").
package pricing

import "crypto/sha256"

// Compute prices a cart with rounds of SHA-256 over 1 KiB: pure CPU, no
// allocation, no lock, no system call.
//
//go:noinline
func Compute(rounds int) [32]byte {
	var buf [1024]byte
	var sum [32]byte
	for i := range rounds {
		buf[0] = byte(i)
		sum = sha256.Sum256(buf[:])
		copy(buf[1:], sum[:])
	}
	return sum
}
