package sched

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// TestClassify decides a table of stacks (leaf first).
func TestClassify(t *testing.T) {
	cases := []struct {
		name  string
		stack []string
		group Group
		frame string
	}{
		{"idle M parks in futex beneath findRunnable",
			[]string{"runtime.futex", "runtime.futexsleep", "runtime.notesleep", "runtime.mPark", "runtime.stopm", "runtime.findRunnable", "runtime.schedule", "runtime.park_m", "runtime.mcall"},
			GroupThreads, "runtime.futex"},
		{"stealing from other Ps",
			[]string{"internal/runtime/atomic.(*Uint32).Load", "runtime.runqgrab", "runtime.runqsteal", "runtime.stealWork", "runtime.findRunnable", "runtime.schedule", "runtime.goexit0", "runtime.mcall"},
			GroupFindWork, "runtime.runqgrab"},
		{"a go statement: the free-G list",
			[]string{"runtime.(*gList).pop", "runtime.gfget", "runtime.newproc1", "runtime.newproc.func1", "runtime.systemstack", "runtime.newproc", "main.dispatch", "main.main", "runtime.main", "runtime.goexit"},
			GroupSpawn, "runtime.gfget"},
		{"closure of a listed function",
			[]string{"runtime.stackpoolalloc", "runtime.stackalloc", "runtime.malg.func1", "runtime.systemstack", "runtime.malg"},
			GroupSpawn, "runtime.malg.func1"},
		{"waking a goroutine starts an M",
			[]string{"runtime.futex", "runtime.futexwakeup", "runtime.notewakeup", "runtime.startm", "runtime.wakep", "runtime.ready", "runtime.goready.func1", "runtime.systemstack", "runtime.goready", "runtime.chansend", "runtime.chansend1", "main.produce"},
			GroupThreads, "runtime.futex"},
		{"goroutine exit",
			[]string{"runtime.unlock2", "runtime.gfput", "runtime.gdestroy", "runtime.goexit0", "runtime.mcall"},
			GroupSpawn, "runtime.gfput"},
		{"sysmon",
			[]string{"runtime.usleep", "runtime.sysmon", "runtime.mstart1", "runtime.mstart0", "runtime.mstart"},
			GroupSysmon, "runtime.sysmon"},
		{"timers from the scheduler loop",
			[]string{"runtime.(*timers).check", "runtime.checkTimers", "runtime.findRunnable", "runtime.schedule"},
			GroupTimers, "runtime.(*timers).check"},
		{"mark assist beneath an allocation",
			[]string{"runtime.scanobject", "runtime.gcDrainN", "runtime.gcAssistAlloc1", "runtime.gcAssistAlloc.func2", "runtime.systemstack", "runtime.gcAssistAlloc", "runtime.mallocgc", "runtime.newobject", "main.alloc"},
			GroupGCMark, "runtime.scanobject"},
		{"the GC worker's idle scheduling is the scheduler",
			[]string{"runtime.findRunnable", "runtime.schedule", "runtime.park_m", "runtime.mcall"},
			GroupFindWork, "runtime.findRunnable"},
		{"background sweeper",
			[]string{"runtime.(*mspan).typePointersOfUnchecked", "runtime.(*sweepLocked).sweep", "runtime.sweepone", "runtime.bgsweep", "runtime.gcenable.gowrap1", "runtime.goexit"},
			GroupGCSweep, "runtime.(*sweepLocked).sweep"},
		{"gcount is not GC",
			[]string{"runtime.gcount", "runtime.checkdead", "runtime.mput", "runtime.stopm", "runtime.findRunnable"},
			GroupThreads, "runtime.stopm"},
		{"plain allocation is other",
			[]string{"runtime.memclrNoHeapPointers", "runtime.mallocgc", "runtime.newobject", "main.alloc", "main.main"},
			GroupNone, ""},
		{"application CPU is other",
			[]string{"crypto/internal/fips140/sha256.blockSHANI", "crypto/sha256.Sum256", "main.work", "runtime.goexit"},
			GroupNone, ""},
		{"runtime/trace.WithRegion beneath application code does not claim it",
			[]string{"crypto/sha256.Sum256", "main.spin", "main.handle.func1", "runtime/trace.WithRegion", "main.handle", "net/http.(*conn).serve", "runtime.goexit"},
			GroupNone, ""},
		{"a trace.Log call is the tracer",
			[]string{"runtime.traceLocker.eventWriter", "runtime/trace.userLog", "runtime/trace.Log", "main.handle"},
			GroupTracer, "runtime.traceLocker.eventWriter"},
		{"the trace reader goroutine writing to a socket",
			[]string{"internal/runtime/syscall/linux.Syscall6", "syscall.Syscall", "syscall.write", "internal/poll.(*FD).Write", "net.(*conn).Write", "net/http.(*response).Write", "runtime/trace.(*traceMultiplexer).startLocked.func1", "runtime.goexit"},
			GroupTracer, "runtime/trace.(*traceMultiplexer).startLocked.func1"},
		{"the profile writer compressing",
			[]string{"compress/flate.(*compressor).deflate", "compress/gzip.(*Writer).Write", "runtime/pprof.(*profileBuilder).build", "runtime/pprof.profileWriter", "runtime.goexit"},
			GroupProfiler, "runtime/pprof.profileWriter"},
		{"a stack walk decides by its caller",
			[]string{"runtime.(*unwinder).next", "runtime.tracebackPCs", "runtime.sigprof", "runtime.sighandler"},
			GroupProfiler, "runtime.sigprof"},
		{"pprof pseudo-frame for GC", []string{"runtime._GC"}, GroupGCMark, "runtime._GC"},
		{"assembly body without a package", []string{"indexbytebody", "runtime.findnull", "runtime.gostringnocopy", "runtime.funcname", "runtime.isSystemGoroutine", "runtime.newproc1"}, GroupSpawn, "runtime.newproc1"},
		{"empty stack", nil, GroupNone, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := DefaultFrames.Classify(c.stack)
			if m.Group != c.group || m.Frame != c.frame {
				t.Errorf("Classify = %v at %q, want %v at %q", m.Group, m.Frame, c.group, c.frame)
			}
			if m.Group == GroupNone && m.Depth != -1 || m.Group != GroupNone && c.stack[m.Depth] != m.Frame {
				t.Errorf("Depth %d does not index %q", m.Depth, m.Frame)
			}
		})
	}
}

func TestGroupClasses(t *testing.T) {
	for g := range NumGroups {
		cl := Group(g).Class()
		if (Group(g) == GroupNone) != (cl == ClassOther) {
			t.Errorf("group %v has class %v", Group(g), cl)
		}
		if Group(g).String() == "none" && Group(g) != GroupNone {
			t.Errorf("group %d has no name", g)
		}
	}
	for _, p := range DefaultPatterns {
		if p.Group == GroupNone && !strings.HasPrefix(p.Func, "runtime.") {
			t.Errorf("exclusion row %q outside the runtime", p.Func)
		}
	}
}

// oldNames are rows kept for runtimes other than the one testing.
var oldNames = map[string]bool{
	"runtime.findrunnable": true, // before Go 1.21
	"runtime._GC":          true, // pprof's pseudo-frame
}

// TestPatternsExist checks that every exact row names a function of the Go
// runtime the tests run on, so a rename in a new release shows up here.
func TestPatternsExist(t *testing.T) {
	src := readRuntimeSource(t)
	if funcRegexp("findRunnableNoSuch").MatchString(src["runtime"]) {
		t.Fatal("the declaration pattern matches a function that does not exist")
	}
	for _, p := range DefaultPatterns {
		if p.Prefix || oldNames[p.Func] {
			continue
		}
		pkg, name := "runtime", strings.TrimPrefix(p.Func, "runtime.")
		if strings.HasPrefix(p.Func, "runtime/") {
			pkg, name = p.Func[:strings.IndexByte(p.Func, '.')], p.Func[strings.IndexByte(p.Func, '.')+1:]
		}
		re := funcRegexp(name)
		if !re.MatchString(src[pkg]) {
			t.Errorf("row %q: no %s in $GOROOT/src/%s", p.Func, re, pkg)
		}
	}
}

// funcRegexp matches the declaration of name ("f" or "(*T).m").
func funcRegexp(name string) *regexp.Regexp {
	if strings.HasPrefix(name, "(*") {
		recv, method, _ := strings.Cut(strings.TrimPrefix(name, "(*"), ").")
		return regexp.MustCompile(`func \(\w+ \*` + regexp.QuoteMeta(recv) + `\) ` + regexp.QuoteMeta(method) + `\(`)
	}
	if recv, method, ok := strings.Cut(name, "."); ok {
		return regexp.MustCompile(`func \(\w+ \*?` + regexp.QuoteMeta(recv) + `\) ` + regexp.QuoteMeta(method) + `\(`)
	}
	return regexp.MustCompile(`func ` + regexp.QuoteMeta(name) + `\(`)
}

func readRuntimeSource(t *testing.T) map[string]string {
	root := runtime.GOROOT()
	out := map[string]string{}
	for _, pkg := range []string{"runtime", "runtime/pprof", "runtime/trace"} {
		files, _ := filepath.Glob(filepath.Join(root, "src", pkg, "*.go"))
		if len(files) == 0 {
			t.Skipf("SKIP: no Go source under %s/src/%s to check the frame table against", root, pkg)
		}
		var b strings.Builder
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(data)
		}
		out[pkg] = b.String()
	}
	return out
}

func TestInternal(t *testing.T) {
	for fn, want := range map[string]bool{
		"runtime.findRunnable":                       true,
		"internal/runtime/atomic.(*Uint32).Load":     true,
		"runtime/trace.WithRegion":                   true,
		"internal/bytealg.IndexByteString":           true,
		"memeqbody":                                  true,
		"internal/poll.(*FD).Read":                   false,
		"main.main":                                  false,
		"sync.(*Mutex).Lock":                         false,
		"github.com/latscope/latscope/sched.Analyze": false,
	} {
		if got := Internal(fn); got != want {
			t.Errorf("Internal(%q) = %v, want %v", fn, got, want)
		}
	}
}
