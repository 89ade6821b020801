package jfr

import "time"

// Event is one event of `jfr print --json`, reduced to the values the
// analysis reads. Values an event type does not have stay zero.
type Event struct {
	Type     string // "jdk.SocketRead"
	Start    time.Time
	Duration time.Duration // zero for instant events (samples, settings)
	// Thread is the event's thread: eventThread, or sampledThread for
	// execution samples.
	Thread Thread
	// Stack is the event's stack, leaf first, cut at the depth it was
	// printed with; nil when the event has none.
	Stack []Frame
	// Truncated is set when the JVM cut the stack at the recording's
	// stack depth (-XX:FlightRecorderOptions:stackdepth, 64 by default).
	Truncated bool

	Setting      Setting   // jdk.ActiveSetting
	JVMStart     time.Time // jdk.JVMInformation: when the JVM started
	HWThreads    int       // jdk.CPUInformation: hardware threads
	Load         CPULoad   // jdk.CPULoad
	Compiler     Compiler  // jdk.CompilerStatistics
	MonitorClass string    // jdk.JavaMonitorEnter, jdk.JavaMonitorWait: the monitor's class
	Req          ReqInfo   // latscope.* events of the Java library (java/)
}

// ReqInfo holds the fields of the events the Java library in java/ emits
// (docs/jfr.md): latscope.Request (a request on its thread: route,
// traceparent, requestId), latscope.TaskSubmit (instant, on the submitting
// thread), latscope.TaskRun (the task on its executor thread) and
// latscope.TaskWait (a thread waiting for the task: Future.get, join); the
// task events carry requestId and taskId.
type ReqInfo struct {
	Route, Traceparent string
	RequestID, TaskID  int64
	Name               string // latscope.Hold: what is held
	Site               string // latscope.Hold: the method that began it (class.method)
	// CPU is the thread's CPU time (the JVM's ThreadMXBean) over a
	// latscope.Request or latscope.TaskRun, measured by the library at
	// begin and end; HasCPU is false when the event has no cpuTime field
	// (a library before it) or the JVM could not measure it (-1).
	CPU    time.Duration
	HasCPU bool
	// Queue is a latscope.Request's queueTime: from the hand-off of its
	// exchange to the server's executor (io.latscope.ServerQueue) to its
	// begin; HasQueue is false without one.
	Queue    time.Duration
	HasQueue bool
	// Workers is a latscope.Request's serverWorkers: the threads the
	// server's executor serves with (io.latscope.ServerQueue); 0 when the
	// event has none or the executor did not say.
	Workers int
}

// maxWorkers bounds a server's workers as an event gives them: a pool
// larger than this is taken as unbounded.
const maxWorkers = 1 << 20

// Thread identifies a Java thread.
type Thread struct {
	Name   string // javaName, or osName for threads without one
	JavaID int64
	OSID   int64
}

// Frame is one stack frame.
type Frame struct {
	// Method is the class (with its package, dots for slashes) and the
	// method: "java.net.Socket$SocketInputStream.read", "Probe.callUpstream".
	Method string
	Line   int
}

// Setting is a jdk.ActiveSetting event: setting Name of the event type with
// id TypeID has Value ("threshold" = "1 ms"). Recording.TypeName resolves
// the id.
type Setting struct {
	TypeID      int64
	Name, Value string
}

// Compiler is a jdk.CompilerStatistics sample: the JIT compiler's totals
// since the JVM started.
type Compiler struct {
	Time  time.Duration // totalTimeSpent: time spent compiling
	Count int64         // compileCount: methods compiled
}

// CPULoad is a jdk.CPULoad sample: shares of all the machine's CPU time
// (0–1) since the previous sample.
type CPULoad struct {
	JVMUser, JVMSystem, MachineTotal float64
}
