// Shop is the JVM service of package jfr's request-mode tests: a
// com.sun.net.httpserver service instrumented with the Java library
// (java/, io.latscope), driven by its own clients (see internal/jfr/jfrtest.RecordShop).
//
// Usage: java -cp LIB:. Shop RESULTS.jsonl N
//
// Routes, each driven by its own client thread(s), N requests a client:
//   /serial   sleep 10 ms; GET the upstream, which answers after 40 ms
//             (HttpURLConnection, jdk.SocketRead); LockSupport.parkNanos 5 ms;
//             5 ms of arithmetic
//   /fanout   submit a GET of the upstream (answers after 30 ms) to an
//             executor wrapped by io.latscope.Tasks; sleep 10 ms; await it.
//             The upstream wait is on the executor thread: 30 ms of it, of
//             which the part after the request thread began to await is on
//             the critical path
//   /helper   a(): Remote.exec(10 ms); b(): Remote.exec(20 ms) — one shared
//             helper reading a local server's answer after the given delay;
//             e(): java.net.http.HttpClient.send to the upstream (15 ms)
//   /pool     two clients; a java.util.concurrent.Semaphore of 1 permit:
//             acquire, sleep 10 ms, release
// The service times each part itself with System.nanoTime (an instrument
// independent of JFR) and, at the end, writes one JSON line per request to
// RESULTS.jsonl: {"route":..,"latency_ns":..,"parts":{name: ns}}.
import com.sun.net.httpserver.HttpServer;
import io.latscope.HttpFilter;
import io.latscope.Tasks;
import java.io.*;
import java.net.*;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.locks.LockSupport;

public class Shop {
    static int upstream, remote;
    static ExecutorService exec;
    static final Semaphore permits = new Semaphore(1);
    static final HttpClient client = HttpClient.newHttpClient();
    static final List<String> lines = Collections.synchronizedList(new ArrayList<>());
    static final ThreadLocal<Map<String, Long>> parts = ThreadLocal.withInitial(LinkedHashMap::new);

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[1]);
        upstream = startUpstream();
        remote = startRemote();
        exec = Tasks.wrap(Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "shop-executor");
            t.setDaemon(true);
            return t;
        }));
        HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
        route(s, "/serial", Shop::serial);
        route(s, "/fanout", Shop::fanout);
        route(s, "/helper", Shop::helper);
        route(s, "/pool", Shop::pool);
        s.setExecutor(Executors.newFixedThreadPool(8));
        s.start();
        int port = s.getAddress().getPort();
        List<Thread> clients = new ArrayList<>();
        for (String r : new String[] {"/serial", "/fanout", "/helper", "/pool", "/pool"}) {
            Thread t = new Thread(() -> drive(port, r, n), "client" + r);
            t.start();
            clients.add(t);
        }
        for (Thread t : clients) {
            t.join();
        }
        try (PrintWriter out = new PrintWriter(new FileWriter(args[0]))) {
            for (String l : lines) {
                out.println(l);
            }
        }
        System.exit(0);
    }

    interface Handler {
        void handle() throws Exception;
    }

    static void route(HttpServer s, String path, Handler h) {
        s.createContext(path, ex -> {
            long t0 = System.nanoTime();
            parts.get().clear();
            try {
                h.handle();
            } catch (Exception e) {
                e.printStackTrace();
                System.exit(1);
            }
            StringBuilder b = new StringBuilder();
            for (Map.Entry<String, Long> e : parts.get().entrySet()) {
                b.append(b.length() == 0 ? "" : ",").append('"').append(e.getKey()).append("\":").append(e.getValue());
            }
            lines.add(String.format("{\"route\":\"%s\",\"latency_ns\":%d,\"parts\":{%s}}", path, System.nanoTime() - t0, b));
            byte[] ok = "ok".getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, ok.length);
            try (OutputStream o = ex.getResponseBody()) {
                o.write(ok);
            }
        }).getFilters().add(new HttpFilter());
    }

    static void drive(int port, String route, int n) {
        try {
            for (int i = 0; i < n; i++) {
                HttpURLConnection c = (HttpURLConnection) new URL("http://127.0.0.1:" + port + route).openConnection();
                try (InputStream in = c.getInputStream()) {
                    in.readAllBytes();
                }
            }
        } catch (IOException e) {
            e.printStackTrace();
            System.exit(1);
        }
    }

    static void part(String name, long t) {
        parts.get().merge(name, System.nanoTime() - t, Long::sum);
    }

    static void serial() throws Exception {
        long t = System.nanoTime();
        Thread.sleep(10);
        part("sleep", t);
        t = System.nanoTime();
        get(40);
        part("upstream", t);
        t = System.nanoTime();
        LockSupport.parkNanos(5_000_000L);
        part("park", t);
        spin(5);
    }

    static void fanout() throws Exception {
        Future<Long[]> f = exec.submit(() -> {
            long t = System.nanoTime();
            get(30);
            return new Long[] {t, System.nanoTime()};
        });
        long t = System.nanoTime();
        Thread.sleep(10);
        part("sleep", t);
        long w = System.nanoTime();
        Long[] up = Tasks.await(f);
        part("upstream", up[0]);
        parts.get().put("upstream", up[1] - up[0]);
        // the upstream's critical part: from the await to the answer
        parts.get().put("upstream_critical", Math.max(0, up[1] - Math.max(w, up[0])));
    }

    static void helper() throws Exception {
        a();
        b();
        e();
    }

    static void a() throws IOException {
        long t = System.nanoTime();
        Remote.exec(10);
        part("a", t);
    }

    static void b() throws IOException {
        long t = System.nanoTime();
        Remote.exec(20);
        part("b", t);
    }

    static void e() throws Exception {
        long t = System.nanoTime();
        HttpRequest r = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + upstream + "/?ms=15")).build();
        client.send(r, HttpResponse.BodyHandlers.ofString());
        part("e", t);
    }

    static void pool() throws Exception {
        long t = System.nanoTime();
        permits.acquire();
        part("acquire", t);
        try {
            t = System.nanoTime();
            Thread.sleep(10);
            part("sleep", t);
        } finally {
            permits.release();
        }
    }

    static void get(int ms) throws IOException {
        HttpURLConnection c = (HttpURLConnection) new URL("http://127.0.0.1:" + upstream + "/?ms=" + ms).openConnection();
        try (InputStream in = c.getInputStream()) {
            in.readAllBytes();
        }
    }

    static volatile long sink;

    static void spin(int ms) {
        long x = sink | 1, end = System.nanoTime() + ms * 1_000_000L;
        while (System.nanoTime() < end) {
            for (int i = 0; i < 1000; i++) {
                x ^= x << 13;
                x ^= x >>> 7;
                x ^= x << 17;
            }
        }
        sink = x;
    }

    /** startUpstream serves GET /?ms=N with "ok" after N ms. */
    static int startUpstream() throws IOException {
        HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
        s.createContext("/", ex -> {
            String q = ex.getRequestURI().getQuery();
            try {
                Thread.sleep(Long.parseLong(q.substring(q.indexOf('=') + 1)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            byte[] b = "ok".getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, b.length);
            try (OutputStream o = ex.getResponseBody()) {
                o.write(b);
            }
        });
        s.setExecutor(Executors.newFixedThreadPool(8));
        s.start();
        return s.getAddress().getPort();
    }

    /** startRemote answers each line "N" with "done" after N ms. */
    static int startRemote() throws IOException {
        ServerSocket ss = new ServerSocket(0, 64, InetAddress.getLoopbackAddress());
        Thread t = new Thread(() -> {
            while (true) {
                try {
                    Socket c = ss.accept();
                    Thread h = new Thread(() -> serveRemote(c), "remote-conn");
                    h.setDaemon(true);
                    h.start();
                } catch (IOException e) {
                    return;
                }
            }
        }, "remote-accept");
        t.setDaemon(true);
        t.start();
        return ss.getLocalPort();
    }

    static void serveRemote(Socket s) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
             Writer out = new OutputStreamWriter(s.getOutputStream(), StandardCharsets.UTF_8)) {
            String l;
            while ((l = in.readLine()) != null) {
                Thread.sleep(Long.parseLong(l.trim()));
                out.write("done\n");
                out.flush();
            }
        } catch (Exception e) {
            // the client went away
        }
    }

    /** Remote is a helper every caller shares: one round trip to the remote server. */
    static final class Remote {
        static final ThreadLocal<Object[]> conn = new ThreadLocal<>();

        static void exec(int ms) throws IOException {
            Object[] c = conn.get();
            if (c == null) {
                Socket s = new Socket(InetAddress.getLoopbackAddress(), remote);
                s.setTcpNoDelay(true);
                c = new Object[] {new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8)),
                    new OutputStreamWriter(s.getOutputStream(), StandardCharsets.UTF_8)};
                conn.set(c);
            }
            Writer w = (Writer) c[1];
            w.write(ms + "\n");
            w.flush();
            if (((BufferedReader) c[0]).readLine() == null) {
                throw new EOFException("remote closed the connection");
            }
        }
    }
}
