package jfr

import (
	"strings"

	"github.com/latscope/latscope/internal/frame"
)

// Rules decide the application frame, the mechanism and the kind of a wait
// from its stack. Names are matched as prefixes of a frame's Method
// ("com.acme.DemoController.handle"); Pools entries match anywhere in it.
// The zero value is not useful; start from DefaultRules.
type Rules struct {
	// App, when non-empty, lists the prefixes of the user's code; only
	// frames in them are application frames (--app PREFIX).
	App []string
	// JDK lists the prefixes of the JDK's own classes.
	JDK []string
	// Infra lists the prefixes of infrastructure libraries (drivers, pools,
	// servers, frameworks, logging): never application frames.
	Infra []string
	// Pools lists names of connection-pool classes. A park or monitor wait
	// beneath one is a wait for a pooled connection. Pool frames are never
	// application frames.
	Pools []string
}

// DefaultRules are the built-in rules.
var DefaultRules = Rules{
	JDK: []string{"java.", "javax.", "jdk.", "sun.", "com.sun."},
	Infra: []string{
		"org.postgresql.", "com.mysql.", "org.mariadb.", "oracle.jdbc.", "com.microsoft.sqlserver.", "org.h2.",
		"com.zaxxer.hikari.", "org.apache.commons.", "org.apache.tomcat.", "io.agroal.", "com.mchange.",
		"io.netty.", "org.apache.http.", "org.apache.hc.", "okhttp3.", "okio.", "io.grpc.", "com.google.protobuf.",
		"org.springframework.", "org.eclipse.jetty.", "org.apache.catalina.", "org.apache.coyote.", "io.undertow.",
		"org.glassfish.", "org.jboss.", "jakarta.", "io.vertx.", "io.quarkus.", "io.micronaut.", "reactor.",
		"ch.qos.logback.", "org.slf4j.", "org.apache.logging.",
		"org.hibernate.", "org.jooq.", "org.apache.ibatis.", "org.mybatis.", "io.r2dbc.",
		"com.fasterxml.jackson.", "io.micrometer.", "io.opentelemetry.", "com.google.common.",
		"io.lettuce.", "redis.clients.", "org.apache.kafka.", "com.mongodb.", "com.datastax.",
		"kotlin.", "kotlinx.", "scala.",
		"io.latscope.",
	},
	Pools: []string{
		"com.zaxxer.hikari.", ".ConcurrentBag.", "org.apache.commons.pool2.", "org.apache.commons.dbcp",
		"org.apache.tomcat.jdbc.pool.", "io.agroal.pool.", "com.mchange.v2.resourcepool.", "oracle.ucp.",
		"com.alibaba.druid.pool.",
	},
}

// Attribution is the outcome of Rules.Decide.
type Attribution struct {
	App       string // innermost application frame; "" when the stack has none
	Mechanism string // see Decide; "" when the application frame blocked itself
	Pool      string // innermost pool frame beneath the application frame, if any
	AppIndex  int    // index of App in the stack, -1 when none
	// HTTPSend tells whether the wait is beneath java.net.http.HttpClient's
	// blocking send: a park on the response's future is a network wait.
	HTTPSend bool
}

// httpSends are the frames of java.net.http.HttpClient's blocking send;
// beneath one, the calling thread parks on the response's future while
// the client's selector thread does the I/O.
var httpSends = []string{"java.net.http.HttpClient.send", "jdk.internal.net.http.HttpClientFacade.send", "jdk.internal.net.http.HttpClientImpl.send"}

// Decide attributes a stack given leaf first. The mechanism is the
// innermost non-JDK frame beneath the application frame (a driver's or a
// pool's); when the application frame called the JDK directly, it is the
// JDK method it called (HttpURLConnection.getInputStream,
// LockSupport.parkNanos, Thread.sleep): the innermost JDK frames
// (Socket$SocketInputStream.read, Unsafe.park) are the same for every wait
// of a kind and say nothing.
func (r *Rules) Decide(stack []Frame) Attribution {
	a := Attribution{AppIndex: -1}
	for i, f := range stack {
		if r.IsApp(f.Method) {
			a.App, a.AppIndex = f.Method, i
			break
		}
	}
	below := stack
	if a.AppIndex >= 0 {
		below = stack[:a.AppIndex]
	}
	for _, f := range below {
		if r.isPool(f.Method) {
			a.Pool = f.Method
			break
		}
	}
	for _, f := range below {
		if hasPrefix(f.Method, httpSends) {
			a.HTTPSend = true
			break
		}
	}
	for _, f := range below {
		if !r.IsJDK(f.Method) {
			a.Mechanism = f.Method
			return a
		}
	}
	if a.AppIndex > 0 {
		a.Mechanism = below[len(below)-1].Method
	}
	return a
}

// IsApp reports whether method (a Frame.Method) is the user's code.
func (r *Rules) IsApp(method string) bool {
	// A lambda's proxy class (JvmService$$Lambda$67/0x0000…) is generated
	// by the JVM, named differently in each run: the lambda's body
	// (lambda$handle$0) beneath it is the application's frame.
	if r.isPool(method) || strings.Contains(method, "$$Lambda") {
		return false
	}
	if len(r.App) > 0 {
		return hasPrefix(method, r.App)
	}
	return !r.IsJDK(method) && !hasPrefix(method, r.Infra)
}

// IsJDK reports whether method belongs to the JDK.
func (r *Rules) IsJDK(method string) bool { return hasPrefix(method, r.JDK) }

func (r *Rules) isPool(method string) bool {
	for _, p := range r.Pools {
		if strings.Contains(method, p) {
			return true
		}
	}
	return false
}

func hasPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// waitKinds maps the JFR wait events latscope reads to kinds.
var waitKinds = map[string]frame.Kind{
	"jdk.SocketRead":       frame.Network,
	"jdk.SocketWrite":      frame.Network,
	"jdk.JavaMonitorEnter": frame.Sync,
	"jdk.JavaMonitorWait":  frame.Cond,
	"jdk.ThreadPark":       frame.Sync,
	"jdk.ThreadSleep":      frame.Sleep,
	"jdk.FileRead":         frame.Syscall,
	"jdk.FileWrite":        frame.Syscall,
}

// WaitKind returns the kind of the waits of event type typ (jdk.SocketRead:
// network); ok is false for a type not in WaitEvents.
func WaitKind(typ string) (kind frame.Kind, ok bool) {
	kind, ok = waitKinds[typ]
	return kind, ok
}

// WaitEvents are the event types whose durations are waits, in the order
// findings list them.
var WaitEvents = []string{
	"jdk.SocketRead", "jdk.SocketWrite", "jdk.JavaMonitorEnter", "jdk.JavaMonitorWait",
	"jdk.ThreadPark", "jdk.ThreadSleep", "jdk.FileRead", "jdk.FileWrite",
}

// QueuePools are the JDK methods an application's own pool waits in when
// the application frame calls them directly: a java.util.concurrent
// Semaphore's acquire, a blocking queue's or deque's take and poll
// (SynchronousQueue and LinkedTransferQueue are hand-offs, not pools). A
// park or monitor wait beneath one is a pool wait. A wait for a result
// passed through such a queue is named a pool wait too.
var QueuePools = []string{
	"java.util.concurrent.Semaphore.acquire", "java.util.concurrent.Semaphore.tryAcquire",
	"java.util.concurrent.LinkedBlockingQueue.take", "java.util.concurrent.LinkedBlockingQueue.poll",
	"java.util.concurrent.ArrayBlockingQueue.take", "java.util.concurrent.ArrayBlockingQueue.poll",
	"java.util.concurrent.PriorityBlockingQueue.take", "java.util.concurrent.PriorityBlockingQueue.poll",
	"java.util.concurrent.LinkedBlockingDeque.take", "java.util.concurrent.LinkedBlockingDeque.poll",
}

func isQueuePool(mech string) bool { return hasPrefix(mech, QueuePools) }

// PoolSuffix marks the mechanism of a wait for a pooled connection.
const PoolSuffix = " (pool wait)"

// Term returns the budget term of a wait event of type typ on a stack
// attributed as a. A park beneath java.net.http.HttpClient's send is a
// network wait. A park or monitor wait beneath a pool is a pool wait:
// its mechanism is the pool frame, marked with PoolSuffix; so is one in a
// method of QueuePools the application frame called. A monitor
// entered by the application frame itself is named by its class.
func (a Attribution) Term(typ, monitorClass string) (app, mechanism string, kind frame.Kind) {
	kind, ok := waitKinds[typ]
	if !ok {
		kind = frame.Other
	}
	mech := a.Mechanism
	switch {
	case a.Pool != "" && (kind == frame.Sync || kind == frame.Cond):
		// a socket read beneath a pool (a query through a proxy statement,
		// a connection check) stays network
		mech, kind = a.Pool+PoolSuffix, frame.Sync
	case isQueuePool(mech) && (kind == frame.Sync || kind == frame.Cond):
		// the application's own pool: a semaphore's permits, a blocking
		// queue of connections
		mech, kind = mech+PoolSuffix, frame.Sync
	case a.HTTPSend && (kind == frame.Sync || kind == frame.Cond):
		// HttpClient.send parks on the response's future: the wait is the
		// exchange with the server, done by the client's own thread
		kind = frame.Network
	case mech == "" && monitorClass != "" && (typ == "jdk.JavaMonitorEnter" || typ == "jdk.JavaMonitorWait"):
		mech = "synchronized " + monitorClass
	}
	return a.App, mech, kind
}
