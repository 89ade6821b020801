//go:build !race

package routertest

const race = false
