//go:build race

package routertest

// race: the race detector's sync.Pool drops items at random, so
// allocation counts are not checked under it.
const race = true
