package latscopelab;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.URL;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinTask;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAdder;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import io.latscope.Holds;
import io.latscope.HttpFilter;
import io.latscope.ServerQueue;
import io.latscope.Tasks;

/**
 * The seed service on the JVM: one endpoint, /work, with four segments —
 * CPU work (cpuWork), an upstream HTTP call (callUpstream, HttpURLConnection),
 * a PostgreSQL query through pgjdbc behind a semaphore pool (queryDb), and
 * CPU work under a shared monitor (sharedSection) — in three modes:
 * serial; concurrent (the upstream call on an executor wrapped with
 * Tasks.wrap, overlapped with the query, joined with Tasks.await); fixed
 * (concurrent, and the shared section's work moved out of the lock).
 * /burst fans a request out into tiny ForkJoinPool tasks (--burst-batch 1)
 * or into a few batches of them (the fix). /lock is the saturation
 * endpoint: CPU work (lockPre), an upstream call with ?ms=, then CPU work
 * under a monitor marked with Holds.locked (lockedSection): a CPU-bound
 * lock. /stats gives the service's own System.nanoTime (and, for /lock,
 * ThreadMXBean) timings, cumulative: the second instrument.
 */
final class JvmService {
    private final String mode;
    private final String upstream;
    private final SemaphorePool pool;
    private final double dbDelaySeconds;
    private final int cpuIters, sharedIters;
    private final ExecutorService branches;
    private final ForkJoinPool fjp;
    private final int burstTasks, burstBatch, burstIters;
    private final int lockPreIters, lockIters;
    private final String lockUpstream;
    private final Object lock = new Object(), lockMonitor = new Object();
    private long sharedCounter;

    // The service's own timings (ns, cumulative since start).
    private final LongAdder requests = new LongAdder(), totalNs = new LongAdder(), cpuNs = new LongAdder(),
            upstreamNs = new LongAdder(), dbNs = new LongAdder(), poolNs = new LongAdder(),
            sharedNs = new LongAdder(), lockNs = new LongAdder(), awaitNs = new LongAdder(),
            burstRequests = new LongAdder(), burstNs = new LongAdder(), burstForks = new LongAdder();
    // /lock's own timings: the request's wall and thread CPU (ThreadMXBean,
    // from the handler's begin to after the exchange is closed), the wait
    // for the monitor, the hold's wall and thread CPU (the CPU figures with
    // their sums of squares, µs²), and the contended hand-offs: the time
    // from one holder's release to the next holder's start when the next
    // one found the lock held.
    private final LongAdder lockRequests = new LongAdder(), lockTotalNs = new LongAdder(), lockReqCpuNs = new LongAdder(),
            lockWaitNs = new LongAdder(), lockHoldNs = new LongAdder(), lockCpuNs = new LongAdder(),
            handOffs = new LongAdder(), handOffNs = new LongAdder();
    private final DoubleAdder lockReqCpuSq = new DoubleAdder(), lockCpuSq = new DoubleAdder();
    private volatile boolean lockHeld;
    private volatile long lockReleased;

    private JvmService(Map<String, String> f, int itersPerMs) throws SQLException {
        mode = f.getOrDefault("mode", "serial");
        if (!mode.equals("serial") && !mode.equals("concurrent") && !mode.equals("fixed")) {
            JvmLab.usage("--mode " + mode + ": want serial, concurrent or fixed");
        }
        upstream = JvmLab.need(f, "upstream");
        dbDelaySeconds = JvmLab.num(f, "db-delay-ms", 50) / 1000.0;
        cpuIters = (int) Math.max(1, Math.round(itersPerMs * JvmLab.num(f, "cpu-us", 1000) / 1000.0));
        sharedIters = (int) Math.max(1, Math.round(itersPerMs * JvmLab.num(f, "shared-us", 2000) / 1000.0));
        pool = new SemaphorePool(JvmLab.need(f, "jdbc"), (int) JvmLab.num(f, "pool", 10));
        branches = Tasks.wrap(Executors.newFixedThreadPool(64, JvmLab.named("branch")));
        fjp = new ForkJoinPool((int) JvmLab.num(f, "burst-parallelism", 32));
        burstTasks = (int) JvmLab.num(f, "burst-tasks", 64);
        burstBatch = (int) Math.max(1, JvmLab.num(f, "burst-batch", 1));
        burstIters = (int) Math.max(1, Math.round(itersPerMs * JvmLab.num(f, "burst-task-ns", 1000) / 1_000_000.0));
        lockPreIters = (int) Math.max(1, Math.round(itersPerMs * JvmLab.num(f, "lock-pre-us", 500) / 1000.0));
        lockIters = (int) Math.max(1, Math.round(itersPerMs * JvmLab.num(f, "lock-us", 1500) / 1000.0));
        lockUpstream = upstream + (upstream.contains("?") ? "&" : "?") + "ms=" + JvmLab.num(f, "lock-upstream-ms", 10);
    }

    static void serve(Map<String, String> f) throws Exception {
        // HttpURLConnection keeps 5 idle connections per host by default;
        // 20 clients need more, or each request opens a new one.
        System.setProperty("http.maxConnections", "256");
        // The JDK's HttpServer sends headers and body in two writes: with
        // Nagle's algorithm on, the body waits for the client's delayed ACK.
        System.setProperty("sun.net.httpserver.nodelay", "true");
        int itersPerMs = (int) JvmLab.num(f, "iters-per-ms", 0);
        if (itersPerMs <= 0) {
            itersPerMs = calibrate();
        }
        JvmService s = new JvmService(f, itersPerMs);
        HttpServer srv = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 1024);
        // ServerQueue.wrap times each exchange's wait for a worker: the
        // request's queueTime (docs/jfr.md).
        srv.setExecutor(ServerQueue.wrap(Executors.newFixedThreadPool((int) JvmLab.num(f, "threads", 64), JvmLab.named("http"))));
        srv.createContext("/work", s::handle).getFilters().add(new HttpFilter());
        srv.createContext("/burst", s::burst).getFilters().add(new HttpFilter());
        srv.createContext("/lock", s::lockRoute).getFilters().add(new HttpFilter());
        srv.createContext("/stats", s::stats);
        srv.start();
        System.out.println("ready: mode=" + s.mode + " iters_per_ms=" + itersPerMs + " cpu_iters=" + s.cpuIters
                + " shared_iters=" + s.sharedIters + " burst_iters=" + s.burstIters + " burst_batch=" + s.burstBatch
                + " lock_pre_iters=" + s.lockPreIters + " lock_iters=" + s.lockIters);
        System.out.flush();
        JvmLab.writeAddr(JvmLab.need(f, "addr-file"), srv.getAddress().getPort());
        Thread.currentThread().join();
    }

    /** The /work handler: the request's four segments in the mode's order. */
    void handle(HttpExchange ex) throws IOException {
        long t0 = System.nanoTime();
        try {
            ex.getRequestBody().readAllBytes();
            cpuWork();
            if (mode.equals("serial")) {
                callUpstream();
                queryDb();
                sharedSection();
            } else {
                Future<?> up = branches.submit(() -> {
                    callUpstream();
                    return null;
                });
                queryDb();
                long w = System.nanoTime();
                Tasks.await(up);
                awaitNs.add(System.nanoTime() - w);
                if (mode.equals("fixed")) {
                    sharedSectionFixed();
                } else {
                    sharedSection();
                }
            }
            JvmLab.reply(ex, 200, "ok\n");
        } catch (Exception e) {
            JvmLab.reply(ex, 500, e.toString() + "\n");
        } finally {
            ex.close();
            requests.increment();
            totalNs.add(System.nanoTime() - t0);
        }
    }

    void cpuWork() {
        long t = System.nanoTime();
        long x = Work.sink | 1;
        for (int i = 0; i < cpuIters; i++) { // Work.hash, inline: the samples land in this frame
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            x += i;
        }
        Work.sink = x;
        cpuNs.add(System.nanoTime() - t);
    }

    void callUpstream() throws IOException {
        long t = System.nanoTime();
        get(upstream);
        upstreamNs.add(System.nanoTime() - t);
    }

    /** get fetches url with HttpURLConnection (kept alive) and wants 200. */
    static void get(String url) throws IOException {
        HttpURLConnection c = (HttpURLConnection) new URL(url).openConnection();
        try (InputStream in = c.getInputStream()) {
            in.readAllBytes();
        }
        if (c.getResponseCode() != 200) {
            throw new IOException("upstream: status " + c.getResponseCode());
        }
    }

    void queryDb() throws Exception {
        long t = System.nanoTime();
        Connection c = pool.acquire();
        poolNs.add(System.nanoTime() - t);
        try (PreparedStatement st = c.prepareStatement("SELECT pg_sleep(?)")) {
            st.setDouble(1, dbDelaySeconds);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    rs.getString(1);
                }
            }
        } finally {
            pool.release(c);
        }
        dbNs.add(System.nanoTime() - t);
    }

    void sharedSection() {
        long t = System.nanoTime();
        synchronized (lock) {
            lockNs.add(System.nanoTime() - t);
            long x = Work.sink | 1;
            for (int i = 0; i < sharedIters; i++) { // Work.hash, inline: the samples land in this frame
                x ^= x << 13;
                x ^= x >>> 7;
                x ^= x << 17;
                x += i;
            }
            Work.sink = x;
            sharedCounter++;
        }
        sharedNs.add(System.nanoTime() - t);
    }

    void sharedSectionFixed() {
        long t = System.nanoTime();
        long x = Work.sink | 1;
        for (int i = 0; i < sharedIters; i++) { // the same work as sharedSection's, outside the lock
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            x += i;
        }
        Work.sink = x;
        long l = System.nanoTime();
        synchronized (lock) {
            lockNs.add(System.nanoTime() - l);
            sharedCounter++;
        }
        sharedNs.add(System.nanoTime() - t);
    }

    /**
     * The /lock handler: lockPre (--lock-pre-us of CPU), an upstream call
     * asking for --lock-upstream-ms, then lockedSection (--lock-us of CPU
     * holding lockMonitor). Its thread CPU, from the handler's begin to
     * after the exchange is closed, is the service's own ThreadMXBean
     * figure of the request's CPU.
     */
    void lockRoute(HttpExchange ex) throws IOException {
        long t0 = System.nanoTime();
        long c0 = JvmLab.THREADS.getCurrentThreadCpuTime();
        try {
            ex.getRequestBody().readAllBytes();
            lockPre();
            get(lockUpstream);
            lockedSection();
            JvmLab.reply(ex, 200, "ok\n");
        } catch (Exception e) {
            JvmLab.reply(ex, 500, e.toString() + "\n");
        } finally {
            ex.close();
            long cpu = JvmLab.THREADS.getCurrentThreadCpuTime() - c0;
            lockRequests.increment();
            lockReqCpuNs.add(cpu);
            lockReqCpuSq.add((cpu / 1e3) * (cpu / 1e3)); // µs², for the mean's spread
            lockTotalNs.add(System.nanoTime() - t0);
        }
    }

    void lockPre() {
        Work.sink = spin(Work.sink | 1, lockPreIters); // Work.hash's loop, in this frame
    }

    /**
     * lockedSection holds lockMonitor for --lock-us of CPU, marked with
     * Holds.locked: the hold (latscope.Hold, named by this frame) and its
     * CPU are recorded; the service times the wait for the monitor, the
     * hold and its thread CPU itself.
     */
    void lockedSection() {
        long w = System.nanoTime();
        boolean contended = lockHeld;
        Holds.locked(lockMonitor, "lockMonitor", () -> {
            long h0 = System.nanoTime();
            lockHeld = true;
            if (contended) {
                handOffs.increment();
                handOffNs.add(h0 - lockReleased);
            }
            long c = JvmLab.THREADS.getCurrentThreadCpuTime();
            lockWaitNs.add(h0 - w);
            Work.sink = spin(Work.sink | 1, lockIters);
            long cpu = JvmLab.THREADS.getCurrentThreadCpuTime() - c;
            lockCpuNs.add(cpu);
            lockCpuSq.add((cpu / 1e3) * (cpu / 1e3));
            long end = System.nanoTime();
            lockHoldNs.add(end - h0);
            lockReleased = end;
            lockHeld = false;
        });
    }

    /** spin runs Work.hash's loop iters times from x. */
    static long spin(long x, int iters) {
        for (int i = 0; i < iters; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            x += i;
        }
        return x;
    }

    /**
     * The /burst handler: --burst-tasks items of --burst-task-ns CPU each,
     * on the ForkJoinPool, in tasks of --burst-batch items (1: one task per
     * item, the churn case), joined before the answer.
     */
    void burst(HttpExchange ex) throws IOException {
        long t0 = System.nanoTime();
        try {
            ex.getRequestBody().readAllBytes();
            fanOut();
            JvmLab.reply(ex, 200, "ok\n");
        } catch (Exception e) {
            JvmLab.reply(ex, 500, e.toString() + "\n");
        } finally {
            ex.close();
            burstRequests.increment();
            burstNs.add(System.nanoTime() - t0);
        }
    }

    void fanOut() {
        List<ForkJoinTask<?>> tasks = new ArrayList<>();
        for (int i = 0; i < burstTasks; i += burstBatch) {
            int n = Math.min(burstBatch, burstTasks - i);
            tasks.add(fjp.submit(() -> burstItems(n)));
        }
        burstForks.add(tasks.size());
        for (ForkJoinTask<?> t : tasks) {
            t.join();
        }
    }

    void burstItems(int n) {
        long x = Work.sink | 1;
        for (int j = 0; j < n; j++) {
            for (int i = 0; i < burstIters; i++) {
                x ^= x << 13;
                x ^= x >>> 7;
                x ^= x << 17;
                x += i;
            }
        }
        Work.sink = x;
    }

    /** GET /stats: the cumulative own timings as one JSON object. */
    void stats(HttpExchange ex) throws IOException {
        String body = String.format(java.util.Locale.ROOT, "{\"requests\":%d,\"total_ns\":%d,\"cpu_ns\":%d,\"upstream_ns\":%d,\"db_ns\":%d,"
                + "\"pool_ns\":%d,\"shared_ns\":%d,\"lock_ns\":%d,\"await_ns\":%d,\"burst_requests\":%d,\"burst_ns\":%d,\"burst_forks\":%d,"
                + "\"lock_requests\":%d,\"lock_total_ns\":%d,\"request_cpu_ns\":%d,\"request_cpu_sq_us2\":%.3f,\"lock_wait_ns\":%d,"
                + "\"lock_hold_ns\":%d,\"lock_cpu_ns\":%d,\"lock_cpu_sq_us2\":%.3f,\"hand_offs\":%d,\"hand_off_ns\":%d}\n",
                requests.sum(), totalNs.sum(), cpuNs.sum(), upstreamNs.sum(), dbNs.sum(), poolNs.sum(), sharedNs.sum(),
                lockNs.sum(), awaitNs.sum(), burstRequests.sum(), burstNs.sum(), burstForks.sum(),
                lockRequests.sum(), lockTotalNs.sum(), lockReqCpuNs.sum(), lockReqCpuSq.sum(), lockWaitNs.sum(),
                lockHoldNs.sum(), lockCpuNs.sum(), lockCpuSq.sum(), handOffs.sum(), handOffNs.sum());
        try {
            JvmLab.reply(ex, 200, body);
        } finally {
            ex.close();
        }
    }

    /**
     * Iterations of Work.hash per millisecond of thread CPU, after warming
     * the JIT: the CPU segments are given in microseconds.
     */
    static int calibrate() {
        long end = System.nanoTime() + 400_000_000L;
        while (System.nanoTime() < end) {
            Work.hash(100_000);
        }
        int best = 0;
        for (int round = 0; round < 3; round++) {
            long c0 = JvmLab.THREADS.getCurrentThreadCpuTime();
            int n = 0;
            while (JvmLab.THREADS.getCurrentThreadCpuTime() - c0 < 50_000_000L) {
                Work.hash(50_000);
                n += 50_000;
            }
            long used = JvmLab.THREADS.getCurrentThreadCpuTime() - c0;
            best = Math.max(best, (int) (n * 1_000_000L / used));
        }
        return Math.max(1, best);
    }

    /** A pool of JDBC connections behind a fair semaphore. */
    static final class SemaphorePool {
        private final java.util.concurrent.Semaphore permits;
        private final java.util.concurrent.ConcurrentLinkedDeque<Connection> idle = new java.util.concurrent.ConcurrentLinkedDeque<>();

        SemaphorePool(String url, int size) throws SQLException {
            permits = new java.util.concurrent.Semaphore(size, true);
            for (int i = 0; i < size; i++) {
                idle.add(DriverManager.getConnection(url));
            }
        }

        Connection acquire() throws InterruptedException {
            permits.acquire();
            return idle.pollFirst();
        }

        void release(Connection c) {
            idle.offerFirst(c);
            permits.release();
        }
    }

    /**
     * CPU work: a xorshift loop in plain Java (no intrinsic, so JFR's
     * execution sampler can walk its stack).
     */
    static final class Work {
        static volatile long sink;

        static void hash(int iters) {
            long x = sink | 1;
            for (int i = 0; i < iters; i++) {
                x ^= x << 13;
                x ^= x >>> 7;
                x ^= x << 17;
                x += i;
            }
            sink = x;
        }
    }
}
