// Probe is the JVM workload of package jfr's tests (see internal/jfr/jfrtest).
//
// Usage: java Probe RESULTS.jsonl WARMUP_MS
//
// Three workers run rounds of requests; a round starts on a barrier, so the
// workers meet the shared parts of handle() in a known order. Per request,
// handle() does, in this order:
//
//   lockedSection  synchronized on one monitor, sleeps 5 ms inside: the
//                  workers arrive together, so per round they wait 5 and
//                  10 ms to enter (jdk.JavaMonitorEnter, 5 ms a request) and
//                  each sleeps 5 ms (jdk.ThreadSleep)
//   callUpstream   a blocking HTTP GET to a local server that answers after
//                  50 ms (jdk.SocketRead, 50 ms)
//   queryDb        takes the one connection of a pool, sends a line to a
//                  local TCP server that answers after 20 ms and reads the
//                  answer (jdk.SocketRead, 20 ms); the workers come out of
//                  the lock 5 ms apart, so per round they wait 0, 15 and 30 ms
//                  for the connection (jdk.ThreadPark under Pool.borrow,
//                  15 ms a request)
//   parkABit       LockSupport.parkNanos(5 ms) (jdk.ThreadPark, 5 ms)
//   cpuWork        5 ms of arithmetic in plain Java (execution samples
//                  only; JFR's sampler drops samples taken inside
//                  intrinsics such as SHA-256's)
//
// After WARMUP_MS it prints "ready" on standard output and goes on until
// standard input closes; then it finishes the round, writes one
// `latscope load` JSON line per request to RESULTS.jsonl and exits. Each
// line also has "probe_ns": the parts of the request as Probe timed them
// itself with System.nanoTime, an instrument independent of JFR.
import com.sun.net.httpserver.HttpServer;
import java.io.*;
import java.net.*;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;
import java.util.concurrent.locks.LockSupport;

public class Probe {
    static final int WORKERS = 3;
    static final Object LOCK = new Object();
    static int upstreamPort;
    static volatile boolean roundStop;
    static Pool pool;

    public static void main(String[] args) throws Exception {
        String results = args[0];
        long warmupMs = Long.parseLong(args[1]);
        upstreamPort = startUpstream();
        pool = new Pool(startDb(), 1);

        AtomicBoolean stop = new AtomicBoolean();
        // the barrier's action runs once a round, so every worker of a round
        // sees the same answer to "stop?"
        CyclicBarrier round = new CyclicBarrier(WORKERS, () -> roundStop = stop.get());
        List<String> lines = Collections.synchronizedList(new ArrayList<>());
        AtomicLong seq = new AtomicLong();
        Thread[] ws = new Thread[WORKERS];
        for (int i = 0; i < WORKERS; i++) {
            int client = i;
            ws[i] = new Thread(() -> work(client, round, seq, lines), "worker-" + i);
            ws[i].start();
        }
        Thread.sleep(warmupMs);
        System.out.println("ready");
        System.out.flush();
        while (System.in.read() != -1) {
        }
        stop.set(true);
        for (Thread w : ws) {
            w.join();
        }
        try (PrintWriter out = new PrintWriter(new FileWriter(results))) {
            for (String l : lines) {
                out.println(l);
            }
        }
        System.exit(0);
    }

    static void work(int client, CyclicBarrier round, AtomicLong seq, List<String> lines) {
        try {
            while (true) {
                round.await();
                if (roundStop) {
                    return;
                }
                Instant start = Instant.now();
                long t0 = System.nanoTime();
                long[] p = handle();
                long lat = System.nanoTime() - t0;
                lines.add(String.format("{\"seq\":%d,\"client\":%d,\"intended\":\"%s\",\"start\":\"%s\",\"latency_ns\":%d,\"code\":200,\"bytes_in\":2,"
                        + "\"probe_ns\":{\"enter\":%d,\"sleep\":%d,\"upstream\":%d,\"pool\":%d,\"db\":%d,\"park\":%d,\"cpu\":%d}}",
                        seq.getAndIncrement(), client, start, start, lat, p[ENTER], p[SLEEP], p[UPSTREAM], p[POOL], p[DB], p[PARK], p[CPU]));
            }
        } catch (Exception e) {
            e.printStackTrace();
            System.exit(1);
        }
    }

    // indexes of the parts handle() times
    static final int ENTER = 0, SLEEP = 1, UPSTREAM = 2, POOL = 3, DB = 4, PARK = 5, CPU = 6;

    static long[] handle() throws Exception {
        long[] p = new long[7];
        lockedSection(p);
        long t = System.nanoTime();
        callUpstream();
        p[UPSTREAM] = System.nanoTime() - t;
        queryDb(p);
        t = System.nanoTime();
        parkABit();
        p[PARK] = System.nanoTime() - t;
        t = System.nanoTime();
        cpuWork();
        p[CPU] = System.nanoTime() - t;
        return p;
    }

    static void lockedSection(long[] p) throws InterruptedException {
        long t = System.nanoTime();
        synchronized (LOCK) {
            long in = System.nanoTime();
            p[ENTER] = in - t;
            Thread.sleep(5);
            p[SLEEP] = System.nanoTime() - in;
        }
    }

    static void callUpstream() throws IOException {
        HttpURLConnection c = (HttpURLConnection) new URL("http://127.0.0.1:" + upstreamPort + "/").openConnection();
        try (InputStream in = c.getInputStream()) {
            while (in.read() != -1) {
            }
        }
    }

    static void queryDb(long[] p) throws Exception {
        long t = System.nanoTime();
        Conn c = pool.borrow();
        long got = System.nanoTime();
        p[POOL] = got - t;
        try {
            c.out.write("select\n");
            c.out.flush();
            if (c.in.readLine() == null) {
                throw new EOFException("db closed the connection");
            }
        } finally {
            p[DB] = System.nanoTime() - got;
            pool.release(c);
        }
    }

    static void parkABit() {
        LockSupport.parkNanos(5_000_000L);
    }

    static volatile long sink;

    static void cpuWork() {
        long x = sink | 1, end = System.nanoTime() + 5_000_000L;
        while (System.nanoTime() < end) {
            for (int i = 0; i < 1000; i++) {
                x ^= x << 13;
                x ^= x >>> 7;
                x ^= x << 17;
            }
        }
        sink = x;
    }

    /** startUpstream serves GET / with "ok" after 50 ms. */
    static int startUpstream() throws IOException {
        HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
        s.createContext("/", ex -> {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            byte[] b = "ok".getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, b.length);
            try (OutputStream o = ex.getResponseBody()) {
                o.write(b);
            }
        });
        s.setExecutor(Executors.newFixedThreadPool(WORKERS + 1));
        s.start();
        return s.getAddress().getPort();
    }

    /** startDb answers each line with "row" after 20 ms. */
    static int startDb() throws IOException {
        ServerSocket ss = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
        Thread t = new Thread(() -> {
            while (true) {
                try {
                    Socket s = ss.accept();
                    Thread h = new Thread(() -> serveDb(s), "db-conn");
                    h.setDaemon(true);
                    h.start();
                } catch (IOException e) {
                    return;
                }
            }
        }, "db-accept");
        t.setDaemon(true);
        t.start();
        return ss.getLocalPort();
    }

    static void serveDb(Socket s) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
             Writer out = new OutputStreamWriter(s.getOutputStream(), StandardCharsets.UTF_8)) {
            while (in.readLine() != null) {
                Thread.sleep(20);
                out.write("row\n");
                out.flush();
            }
        } catch (Exception e) {
            // the client went away
        }
    }

    /** Conn is one connection to the db server. */
    static final class Conn {
        final BufferedReader in;
        final Writer out;

        Conn(int port) throws IOException {
            Socket s = new Socket(InetAddress.getLoopbackAddress(), port);
            s.setTcpNoDelay(true);
            in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
            out = new OutputStreamWriter(s.getOutputStream(), StandardCharsets.UTF_8);
        }
    }

    /** Pool is a fixed-size connection pool; borrow blocks while all are out. */
    static final class Pool {
        private final LinkedBlockingQueue<Conn> free = new LinkedBlockingQueue<>();

        Pool(int port, int size) throws IOException {
            for (int i = 0; i < size; i++) {
                free.add(new Conn(port));
            }
        }

        Conn borrow() throws InterruptedException {
            return free.take();
        }

        void release(Conn c) {
            free.add(c);
        }
    }
}
