package jfr

import (
	"testing"

	"github.com/latscope/latscope/internal/frame"
)

func stackOf(methods ...string) []Frame {
	fs := make([]Frame, len(methods))
	for i, m := range methods {
		fs[i] = Frame{Method: m}
	}
	return fs
}

func TestDecide(t *testing.T) {
	tests := []struct {
		name     string
		app      []string
		typ      string
		monitor  string
		stack    []string
		wantApp  string
		wantMech string
		wantKind frame.Kind
	}{
		{"http client", nil, "jdk.SocketRead", "", []string{"java.net.Socket$SocketInputStream.read", "java.io.BufferedInputStream.fill", "sun.net.www.http.HttpClient.parseHTTP",
			"sun.net.www.protocol.http.HttpURLConnection.getInputStream0", "sun.net.www.protocol.http.HttpURLConnection.getInputStream", "com.acme.Upstream.call", "com.acme.DemoController.handle"},
			"com.acme.Upstream.call", "sun.net.www.protocol.http.HttpURLConnection.getInputStream", frame.Network},
		{"java.net.http.HttpClient.send parks on the response", nil, "jdk.ThreadPark", "", []string{"jdk.internal.misc.Unsafe.park", "java.util.concurrent.locks.LockSupport.park",
			"java.util.concurrent.CompletableFuture$Signaller.block", "java.util.concurrent.ForkJoinPool.managedBlock", "java.util.concurrent.CompletableFuture.waitingGet",
			"java.util.concurrent.CompletableFuture.get", "jdk.internal.net.http.HttpClientImpl.send", "jdk.internal.net.http.HttpClientFacade.send", "com.acme.Upstream.call", "com.acme.DemoController.handle"},
			"com.acme.Upstream.call", "jdk.internal.net.http.HttpClientFacade.send", frame.Network},
		{"postgres through a hikari proxy", nil, "jdk.SocketRead", "", []string{"sun.nio.ch.NioSocketImpl.read", "java.net.Socket$SocketInputStream.read", "org.postgresql.core.VisibleBufferedInputStream.readMore",
			"org.postgresql.core.PGStream.receiveChar", "org.postgresql.jdbc.PgPreparedStatement.executeQuery", "com.zaxxer.hikari.pool.HikariProxyPreparedStatement.executeQuery", "com.acme.Repo.find", "com.acme.DemoController.handle"},
			"com.acme.Repo.find", "org.postgresql.core.VisibleBufferedInputStream.readMore", frame.Network},
		{"hikari pool wait", nil, "jdk.ThreadPark", "", []string{"jdk.internal.misc.Unsafe.park", "java.util.concurrent.locks.LockSupport.parkNanos", "java.util.concurrent.SynchronousQueue$TransferStack.awaitFulfill",
			"java.util.concurrent.SynchronousQueue.poll", "com.zaxxer.hikari.util.ConcurrentBag.borrow", "com.zaxxer.hikari.pool.HikariPool.getConnection", "com.zaxxer.hikari.HikariDataSource.getConnection", "com.acme.Repo.find"},
			"com.acme.Repo.find", "com.zaxxer.hikari.util.ConcurrentBag.borrow" + PoolSuffix, frame.Sync},
		{"shaded ConcurrentBag", nil, "jdk.ThreadPark", "", []string{"jdk.internal.misc.Unsafe.park", "java.util.concurrent.locks.LockSupport.parkNanos", "com.acme.shaded.hikari.util.ConcurrentBag.borrow", "com.acme.Repo.find"},
			"com.acme.Repo.find", "com.acme.shaded.hikari.util.ConcurrentBag.borrow" + PoolSuffix, frame.Sync},
		{"semaphore pool", nil, "jdk.ThreadPark", "", []string{"jdk.internal.misc.Unsafe.park", "java.util.concurrent.locks.LockSupport.park", "java.util.concurrent.locks.AbstractQueuedSynchronizer.acquireSharedInterruptibly",
			"java.util.concurrent.Semaphore.acquire", "com.acme.Conns.get", "com.acme.Repo.find"},
			"com.acme.Conns.get", "java.util.concurrent.Semaphore.acquire" + PoolSuffix, frame.Sync},
		{"blocking queue pool", nil, "jdk.ThreadPark", "", []string{"jdk.internal.misc.Unsafe.park", "java.util.concurrent.locks.LockSupport.park",
			"java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject.await", "java.util.concurrent.LinkedBlockingQueue.take", "Probe$Pool.borrow", "Probe.queryDb"},
			"Probe$Pool.borrow", "java.util.concurrent.LinkedBlockingQueue.take" + PoolSuffix, frame.Sync},
		{"blocking queue poll with a timeout", nil, "jdk.ThreadPark", "", []string{"jdk.internal.misc.Unsafe.park", "java.util.concurrent.locks.LockSupport.parkNanos",
			"java.util.concurrent.ArrayBlockingQueue.poll", "com.acme.Conns.get"},
			"com.acme.Conns.get", "java.util.concurrent.ArrayBlockingQueue.poll" + PoolSuffix, frame.Sync},
		{"synchronous queue is a hand-off", nil, "jdk.ThreadPark", "", []string{"jdk.internal.misc.Unsafe.park", "java.util.concurrent.locks.LockSupport.park",
			"java.util.concurrent.SynchronousQueue.take", "com.acme.Relay.next"},
			"com.acme.Relay.next", "java.util.concurrent.SynchronousQueue.take", frame.Sync},
		{"park called by the app", nil, "jdk.ThreadPark", "", []string{"jdk.internal.misc.Unsafe.park", "java.util.concurrent.locks.LockSupport.parkNanos", "Probe.parkABit", "Probe.handle"},
			"Probe.parkABit", "java.util.concurrent.locks.LockSupport.parkNanos", frame.Sync},
		{"reentrant lock", nil, "jdk.ThreadPark", "", []string{"jdk.internal.misc.Unsafe.park", "java.util.concurrent.locks.LockSupport.park", "java.util.concurrent.locks.AbstractQueuedSynchronizer.acquire",
			"java.util.concurrent.locks.ReentrantLock$Sync.lock", "java.util.concurrent.locks.ReentrantLock.lock", "com.acme.Cache.get"},
			"com.acme.Cache.get", "java.util.concurrent.locks.ReentrantLock.lock", frame.Sync},
		{"synchronized block", nil, "jdk.JavaMonitorEnter", "java.lang.Object", []string{"Probe.lockedSection", "Probe.handle"},
			"Probe.lockedSection", "synchronized java.lang.Object", frame.Sync},
		{"synchronized JDK method", nil, "jdk.JavaMonitorEnter", "java.util.Hashtable", []string{"java.util.Hashtable.get", "com.acme.Cache.get"},
			"com.acme.Cache.get", "java.util.Hashtable.get", frame.Sync},
		{"Object.wait under a pool", nil, "jdk.JavaMonitorWait", "", []string{"java.lang.Object.wait", "org.apache.commons.pool2.impl.GenericObjectPool.borrowObject", "com.acme.Repo.find"},
			"com.acme.Repo.find", "org.apache.commons.pool2.impl.GenericObjectPool.borrowObject" + PoolSuffix, frame.Sync},
		{"Object.wait", nil, "jdk.JavaMonitorWait", "", []string{"java.lang.Object.wait", "com.acme.Queue.take"},
			"com.acme.Queue.take", "java.lang.Object.wait", frame.Cond},
		{"sleep", nil, "jdk.ThreadSleep", "", []string{"java.lang.Thread.sleep", "Probe.lockedSection"}, "Probe.lockedSection", "java.lang.Thread.sleep", frame.Sleep},
		{"file read", nil, "jdk.FileRead", "", []string{"java.io.FileInputStream.read", "com.acme.Config.load"}, "com.acme.Config.load", "java.io.FileInputStream.read", frame.Syscall},
		{"servlet body read", nil, "jdk.SocketRead", "", []string{"sun.nio.ch.NioSocketImpl.read", "org.apache.tomcat.util.net.NioEndpoint$NioSocketWrapper.read",
			"org.apache.catalina.connector.CoyoteInputStream.read", "com.acme.Upload.handle", "org.springframework.web.servlet.DispatcherServlet.doDispatch"},
			"com.acme.Upload.handle", "org.apache.tomcat.util.net.NioEndpoint$NioSocketWrapper.read", frame.Network},
		{"no app frame", nil, "jdk.ThreadPark", "", []string{"jdk.internal.misc.Unsafe.park", "java.util.concurrent.LinkedBlockingQueue.take", "java.util.concurrent.ThreadPoolExecutor.getTask", "java.lang.Thread.run"},
			"", "", frame.Sync},
		{"infra only", nil, "jdk.SocketRead", "", []string{"sun.nio.ch.NioSocketImpl.read", "io.netty.channel.nio.NioEventLoop.run"}, "", "io.netty.channel.nio.NioEventLoop.run", frame.Network},
		{"--app prefix", []string{"com.acme.web."}, "jdk.SocketRead", "", []string{"java.net.Socket$SocketInputStream.read", "com.acme.lib.Client.get", "com.acme.web.Handler.serve"},
			"com.acme.web.Handler.serve", "com.acme.lib.Client.get", frame.Network},
		{"unknown event", nil, "jdk.Other", "", []string{"com.acme.X.y"}, "com.acme.X.y", "", frame.Other},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := DefaultRules
			r.App = tt.app
			app, mech, kind := r.Decide(stackOf(tt.stack...)).Term(tt.typ, tt.monitor)
			if app != tt.wantApp || mech != tt.wantMech || kind != tt.wantKind {
				t.Errorf("got {%q, %q, %v}, want {%q, %q, %v}", app, mech, kind, tt.wantApp, tt.wantMech, tt.wantKind)
			}
		})
	}
}

func TestSettingsCombine(t *testing.T) {
	tests := []struct {
		name string
		vs   []string
		want string
	}{
		{"threshold", []string{"10 ms", "1 ms", "20 ms"}, "1 ms"},
		{"threshold", []string{"0 ns", "10 ms"}, "0 ns"},
		{"threshold", []string{"1 s", "999 ms"}, "999 ms"},
		{"enabled", []string{"false", "true"}, "true"},
		{"enabled", []string{"false"}, "false"},
		{"period", []string{"20 ms", "10 ms"}, "10 ms"},
	}
	for _, tt := range tests {
		if got := combine(tt.name, tt.vs); got != tt.want {
			t.Errorf("combine(%q, %q) = %q, want %q", tt.name, tt.vs, got, tt.want)
		}
	}
}

// TestLambdaProxyNotApp: the JVM's generated lambda proxy classes are no
// application frame; the lambda's body is.
func TestLambdaProxyNotApp(t *testing.T) {
	r := DefaultRules
	for m, want := range map[string]bool{
		"latscopelab.JvmService$$Lambda$67/0x0000000800c0b000.run": false,
		"latscopelab.JvmService.lambda$handle$0":                   true,
		"latscopelab.JvmService.handle":                            true,
	} {
		if got := r.IsApp(m); got != want {
			t.Errorf("IsApp(%q) = %v, want %v", m, got, want)
		}
	}
}
