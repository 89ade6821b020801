//go:build !race

package agentgrpc

const race = false
