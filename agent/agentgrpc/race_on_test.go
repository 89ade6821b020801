//go:build race

package agentgrpc

// race: allocation counts are not checked under the race detector.
const race = true
