// Svc is a JDK service of real shape for package jfr's CPU, pool, lock and
// server-queue tests: a com.sun.net.httpserver service on a fixed pool of
// 32 worker threads (wrapped with io.latscope.ServerQueue), instrumented
// with the Java library (java/, io.latscope), with its own classes for the
// parts: an ETag hashed with SHA-256 (a JVM intrinsic: JFR's execution
// sampler leaves it almost unsampled), a connection pool of its own
// (ConnPool: borrow/release around an ArrayBlockingQueue, the hold marked
// with io.latscope.Holds), a query over a socket to a local "database"
// that answers after a delay, and a cache updated under a lock whose
// section is CPU-bound (SHA-256 again, through Holds.locked).
//
// Usage: java -cp LIB:. Svc RESULTS.jsonl CLIENTS SECONDS MODE
//
// CLIENTS closed-loop clients (in the same JVM, no think time) run for
// SECONDS; MODE "locked" hashes the cache entry inside the lock, "fixed"
// hashes it before taking the lock (the change a compare judges). The
// service times each request itself, independently of JFR: its own filter
// (outside the library's) takes the handling thread's CPU time from
// ThreadMXBean and System.nanoTime at begin and end, the lock's section
// takes its own, and the clients time each request end to end. It writes
// one JSON line per finished request to RESULTS.jsonl:
//   {"start_unix_ns":..,"latency_ns":..,"cpu_ns":..,"lock_cpu_ns":..,
//    "lock_ns":..,"db_ns":..}
// and, on standard output, one summary line:
//   {"clients":..,"mode":..,"per_second":[..],"client_ns_per_second":[..]}
// with the clients' completions in each second of the run and the sum of
// their latencies (the client's view: the server's queue and the network
// included).
import com.sun.net.httpserver.Filter;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.latscope.Holds;
import io.latscope.HttpFilter;
import io.latscope.ServerQueue;
import java.io.*;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.*;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.AtomicLongArray;

public class Svc {
    static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    static final int ETAG_KB = 1024, LOCK_KB = 2048, DB_MS = 6, POOL = 6;
    static int workers = 32; // the HTTP server's threads: args[4], 32 without
    static final List<String> lines = Collections.synchronizedList(new ArrayList<>());
    static final ThreadLocal<long[]> own = ThreadLocal.withInitial(() -> new long[4]); // lock cpu, lock ns, db ns
    static final ThreadLocal<Long> clientNs = new ThreadLocal<>();
    static ConnPool pool;
    static Cache cache;
    static String mode;

    public static void main(String[] args) throws Exception {
        String results = args[0];
        int clients = Integer.parseInt(args[1]);
        double seconds = Double.parseDouble(args[2]);
        mode = args[3];
        if (args.length > 4) {
            workers = Integer.parseInt(args[4]);
        }
        // as services are deployed: without it the JDK's server writes the
        // headers and the body separately and the body waits for the
        // client's delayed ACK (docs/lab-jvm.md)
        System.setProperty("sun.net.httpserver.nodelay", "true");
        int db = Db.start(DB_MS);
        pool = new ConnPool(db, POOL);
        cache = new Cache();
        HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 256);
        var ctx = s.createContext("/order", Svc::order);
        ctx.getFilters().add(new OwnTimer());
        ctx.getFilters().add(new HttpFilter());
        s.setExecutor(ServerQueue.wrap(Executors.newFixedThreadPool(workers, r -> {
            Thread t = new Thread(r, "http-worker");
            t.setDaemon(true);
            return t;
        })));
        s.start();
        int port = s.getAddress().getPort();
        long start = System.nanoTime(), end = start + (long) (seconds * 1e9);
        int secs = (int) Math.ceil(seconds);
        AtomicLongArray done = new AtomicLongArray(secs + 1), took = new AtomicLongArray(secs + 1);
        List<Thread> ts = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            Thread t = new Thread(() -> client(port, start, end, done, took), "client-" + c);
            t.setDaemon(true);
            t.start();
            ts.add(t);
        }
        for (Thread t : ts) {
            t.join();
        }
        s.stop(0);
        try (PrintWriter w = new PrintWriter(new FileWriter(results))) {
            synchronized (lines) {
                for (String l : lines) {
                    w.println(l);
                }
            }
        }
        StringBuilder b = new StringBuilder("{\"clients\":" + clients + ",\"mode\":\"" + mode + "\",\"per_second\":[");
        for (int i = 0; i < secs; i++) {
            b.append(i > 0 ? "," : "").append(done.get(i));
        }
        b.append("],\"client_ns_per_second\":[");
        for (int i = 0; i < secs; i++) {
            b.append(i > 0 ? "," : "").append(took.get(i));
        }
        System.out.println(b.append("]}"));
        System.exit(0);
    }

    static void client(int port, long start, long end, AtomicLongArray done, AtomicLongArray took) {
        byte[] buf = new byte[4096];
        while (System.nanoTime() < end) {
            long t0 = System.nanoTime();
            try {
                HttpURLConnection c = (HttpURLConnection) new URL("http://127.0.0.1:" + port + "/order").openConnection();
                try (InputStream in = c.getInputStream()) {
                    while (in.read(buf) >= 0) {
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            long t1 = System.nanoTime();
            int sec = (int) ((t1 - start) / 1_000_000_000L);
            if (t1 < end && sec < done.length()) {
                done.incrementAndGet(sec);
                took.addAndGet(sec, t1 - t0);
            }
        }
    }

    /** OwnTimer is the service's own instrument: ThreadMXBean and nanoTime around the library's filter and the handler. */
    static final class OwnTimer extends Filter {
        @Override
        public void doFilter(HttpExchange ex, Chain chain) throws IOException {
            long[] o = own.get();
            Arrays.fill(o, 0);
            long wall = System.currentTimeMillis() * 1_000_000L, t0 = System.nanoTime(), c0 = MX.getCurrentThreadCpuTime();
            chain.doFilter(ex);
            long c1 = MX.getCurrentThreadCpuTime(), t1 = System.nanoTime();
            lines.add(String.format("{\"start_unix_ns\":%d,\"latency_ns\":%d,\"cpu_ns\":%d,\"lock_cpu_ns\":%d,\"lock_ns\":%d,\"db_ns\":%d}",
                    wall, t1 - t0, c1 - c0, o[0], o[1], o[2]));
        }

        @Override
        public String description() {
            return "Svc's own timer";
        }
    }

    static void order(HttpExchange ex) throws IOException {
        String tag = Etag.of(ex.getRequestURI().toString());
        String row = queryDb();
        String entry = Svc.updateCache(tag + row);
        byte[] b = ("{\"etag\":\"" + tag + "\",\"row\":\"" + row + "\",\"cache\":\"" + entry + "\"}").getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("ETag", tag);
        ex.sendResponseHeaders(200, b.length);
        try (OutputStream o = ex.getResponseBody()) {
            o.write(b);
        }
    }

    static String queryDb() throws IOException {
        long t0 = System.nanoTime();
        ConnPool.Conn c = pool.borrow();
        try {
            return c.query("SELECT total FROM orders WHERE id = 42");
        } finally {
            pool.release(c);
            own.get()[2] += System.nanoTime() - t0;
        }
    }

    static String updateCache(String v) {
        if (mode.equals("fixed")) {
            String h = Etag.sha(v, LOCK_KB);
            return Holds.locked(cache, "cache", () -> cache.put(h));
        }
        return Holds.locked(cache, "cache", () -> {
            long t0 = System.nanoTime(), c0 = MX.getCurrentThreadCpuTime();
            String h = cache.put(Etag.sha(v, LOCK_KB));
            long[] o = own.get();
            o[0] += MX.getCurrentThreadCpuTime() - c0;
            o[1] += System.nanoTime() - t0;
            return h;
        });
    }
}

/** Etag hashes with SHA-256 (a JVM intrinsic on x86 and aarch64). */
final class Etag {
    static final byte[] block = new byte[1024];

    static String of(String uri) {
        return sha(uri, Svc.ETAG_KB);
    }

    static String sha(String seed, int kb) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            md.update(seed.getBytes(StandardCharsets.UTF_8));
            for (int i = 0; i < kb; i++) {
                md.update(block);
            }
            byte[] d = md.digest();
            return String.format("%02x%02x%02x%02x", d[0], d[1], d[2], d[3]);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}

/** Cache is a shared map updated under its monitor. */
final class Cache {
    private final Map<String, Integer> m = new HashMap<>();

    String put(String k) {
        m.merge(k, 1, Integer::sum);
        if (m.size() > 4096) {
            m.clear();
        }
        return k;
    }
}

/** ConnPool is the service's own connection pool: a queue of open connections. */
final class ConnPool {
    private final ArrayBlockingQueue<Conn> idle;

    ConnPool(int port, int size) throws IOException {
        idle = new ArrayBlockingQueue<>(size);
        for (int i = 0; i < size; i++) {
            idle.add(new Conn(port));
        }
    }

    Conn borrow() {
        try {
            Conn c = idle.take();
            c.hold = Holds.begin("ConnPool");
            return c;
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    void release(Conn c) {
        c.hold.end();
        idle.add(c);
    }

    static final class Conn {
        final Socket s;
        final BufferedReader in;
        final Writer out;
        Holds.Hold hold;

        Conn(int port) throws IOException {
            s = new Socket("127.0.0.1", port);
            s.setTcpNoDelay(true);
            in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
            out = new OutputStreamWriter(s.getOutputStream(), StandardCharsets.UTF_8);
        }

        String query(String q) throws IOException {
            out.write(q + "\n");
            out.flush();
            return in.readLine();
        }
    }
}

/** Db is a local "database": each line it reads is answered after a delay. */
final class Db {
    static int start(int delayMs) throws IOException {
        ServerSocket ss = new ServerSocket(0, 64, InetAddress.getLoopbackAddress());
        Thread a = new Thread(() -> {
            while (true) {
                try {
                    Socket s = ss.accept();
                    s.setTcpNoDelay(true);
                    Thread t = new Thread(() -> serve(s, delayMs), "db-conn");
                    t.setDaemon(true);
                    t.start();
                } catch (IOException e) {
                    return;
                }
            }
        }, "db-accept");
        a.setDaemon(true);
        a.start();
        return ss.getLocalPort();
    }

    static void serve(Socket s, int delayMs) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
             Writer out = new OutputStreamWriter(s.getOutputStream(), StandardCharsets.UTF_8)) {
            while (in.readLine() != null) {
                Thread.sleep(delayMs);
                out.write("42.00\n");
                out.flush();
            }
        } catch (IOException | InterruptedException e) {
            // the service stopped
        }
    }
}
