package frame

import "strings"

// Kind classifies an interval of goroutine time.
type Kind uint8

// Kinds. Running and Runnable are goroutine states; the rest are wait kinds
// derived from the runtime's reason string.
const (
	Running Kind = iota
	Runnable
	Network
	Select
	ChanRecv
	ChanSend
	Sync
	Cond
	Sleep
	Syscall
	GCAssist
	GC
	System
	Forever
	Preempted
	Other
	numKinds
)

// NumKinds is the number of kinds, for arrays indexed by Kind.
const NumKinds = int(numKinds)

var kindNames = [...]string{
	Running:   "running",
	Runnable:  "runnable",
	Network:   "network",
	Select:    "select",
	ChanRecv:  "chan receive",
	ChanSend:  "chan send",
	Sync:      "sync",
	Cond:      "sync.Cond",
	Sleep:     "sleep",
	Syscall:   "syscall",
	GCAssist:  "GC assist",
	GC:        "GC",
	System:    "system",
	Forever:   "forever",
	Preempted: "preempted",
	Other:     "other",
}

// String returns the kind's name as printed in tables and JSON.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "other"
}

// IsWait reports whether k is off-CPU waiting (not running or runnable).
func (k Kind) IsWait() bool { return k != Running && k != Runnable }

// IsHandOff reports whether a wait of kind k ends when another goroutine
// hands something over — a channel, a mutex, a sync.Cond: the waits a
// pool's, semaphore's or lock's acquire can be.
func (k Kind) IsHandOff() bool {
	switch k {
	case ChanSend, ChanRecv, Select, Sync, Cond:
		return true
	}
	return false
}

// ParseKind returns the kind named s (as printed by String).
func ParseKind(s string) (Kind, bool) {
	for k, n := range kindNames {
		if n == s {
			return Kind(k), true
		}
	}
	return Other, false
}

// reasonKinds maps the runtime's wait-reason strings (Go 1.22+ traces) to kinds.
var reasonKinds = map[string]Kind{
	"network":                    Network,
	"select":                     Select,
	"select (no cases)":          Forever,
	"chan receive":               ChanRecv,
	"chan receive (nil chan)":    Forever,
	"chan send":                  ChanSend,
	"chan send (nil chan)":       Forever,
	"sync":                       Sync,
	"sync.(*Cond).Wait":          Cond,
	"sleep":                      Sleep,
	"syscall":                    Syscall,
	"GC assist wait":             GCAssist,
	"GC background sweeper wait": GC,
	"GC weak to strong wait":     GC,
	"wait until GC ends":         GC,
	"system goroutine wait":      System,
	"forever":                    Forever,
	"preempted":                  Preempted,
}

// KindOfReason returns the kind of a runtime wait reason. Unknown reasons
// (new runtimes add some) are Other.
func KindOfReason(reason string) Kind {
	if k, ok := reasonKinds[reason]; ok {
		return k
	}
	if strings.HasPrefix(reason, "GC") {
		return GC
	}
	return Other
}
