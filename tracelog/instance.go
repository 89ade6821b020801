package tracelog

import (
	"fmt"
	"os"
	"strings"
	"unicode/utf8"
)

// Instance is the log category of the agent's instance name: which
// process of a fleet wrote the trace (agent.Options.Instance, by default
// the host name). The agent logs it outside any task beside every Module
// log, so every flight-recorder window holds one near its start; analyze
// labels a trace with it when it aggregates several.
const Instance = "latscope.instance"

// MaxInstanceLen bounds an instance name, in bytes.
const MaxInstanceLen = 256

// DefaultInstance is the instance name when none is given: the host name,
// or "" when the system has none.
func DefaultInstance() string {
	h, err := os.Hostname()
	if err != nil {
		return ""
	}
	return CleanInstance(h)
}

// CleanInstance returns name fit to be logged under Instance: control
// characters and invalid UTF-8 replaced by '?', without leading and
// trailing space, cut to MaxInstanceLen bytes (at a character boundary).
func CleanInstance(name string) string {
	name = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || r == utf8.RuneError {
			return '?'
		}
		return r
	}, strings.TrimSpace(name))
	if len(name) <= MaxInstanceLen {
		return name
	}
	cut := MaxInstanceLen
	for cut > 0 && !utf8Start(name[cut]) {
		cut--
	}
	return strings.TrimSpace(name[:cut])
}

// utf8Start reports whether b begins a UTF-8 character.
func utf8Start(b byte) bool { return b&0xc0 != 0x80 }

// ParseInstance parses the message of an Instance log: a name of 1 to
// MaxInstanceLen bytes without control characters.
func ParseInstance(msg string) (string, error) {
	if msg == "" || len(msg) > MaxInstanceLen || CleanInstance(msg) != msg {
		return "", fmt.Errorf("%s log %q: want a name of 1 to %d bytes without control characters or surrounding space", Instance, msg, MaxInstanceLen)
	}
	return msg, nil
}
