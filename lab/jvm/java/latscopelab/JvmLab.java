package latscopelab;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpServer;

/**
 * The JVM side of `latscope-lab jvm` (docs/lab-jvm.md): {@code serve} runs the
 * seed service ({@link JvmService}), {@code upstream} a JDK HttpServer that
 * answers every request after a configured delay.
 */
public final class JvmLab {
    private JvmLab() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            usage("want a command: serve or upstream");
        }
        Map<String, String> flags = parseFlags(args);
        switch (args[0]) {
            case "serve":
                JvmService.serve(flags);
                break;
            case "upstream":
                upstream(flags);
                break;
            default:
                usage("unknown command " + args[0]);
        }
    }

    static void usage(String why) {
        System.err.println("latscopelab.JvmLab: " + why);
        System.err.println("usage: JvmLab serve --mode serial|concurrent|fixed --upstream URL --jdbc URL [--pool 10] [--lock-pre-us 500] [--lock-us 1500] [--lock-upstream-ms 10] ... --addr-file F");
        System.err.println("       JvmLab upstream --delay-ms 100 --addr-file F");
        System.exit(2);
    }

    /** Flags are --name value pairs after the command. */
    static Map<String, String> parseFlags(String[] args) {
        Map<String, String> m = new HashMap<>();
        for (int i = 1; i < args.length; i += 2) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                usage("bad flag " + args[i] + ": want --name value");
            }
            m.put(args[i].substring(2), args[i + 1]);
        }
        return m;
    }

    static String need(Map<String, String> f, String name) {
        String v = f.get(name);
        if (v == null || v.isEmpty()) {
            usage("--" + name + " is required");
        }
        return v;
    }

    static long num(Map<String, String> f, String name, long def) {
        String v = f.get(name);
        if (v == null) {
            return def;
        }
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            usage("--" + name + " " + v + ": want an integer");
            return 0;
        }
    }

    /** Writes "127.0.0.1:port" to path atomically: the Go side waits for it. */
    static void writeAddr(String path, int port) throws IOException {
        Path p = Path.of(path);
        Path tmp = Path.of(path + ".tmp");
        Files.writeString(tmp, "127.0.0.1:" + port + "\n");
        Files.move(tmp, p, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /** Named daemon threads for a pool. */
    static ThreadFactory named(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    static void reply(com.sun.net.httpserver.HttpExchange ex, int code, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
        ex.sendResponseHeaders(code, b.length);
        try (OutputStream os = ex.getResponseBody()) {
            os.write(b);
        }
    }

    /**
     * The upstream: sleeps --delay-ms (or the request's {@code ?ms=N}: the
     * /lock endpoint asks for its own delay), then answers "ok".
     */
    static void upstream(Map<String, String> f) throws Exception {
        long delay = num(f, "delay-ms", 100);
        String addrFile = need(f, "addr-file");
        // Headers and body go out in two writes: without TCP_NODELAY the
        // body waits for the client's delayed ACK (tens of ms).
        System.setProperty("sun.net.httpserver.nodelay", "true");
        HttpServer srv = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 1024);
        ExecutorService pool = Executors.newFixedThreadPool(128, named("upstream"));
        srv.setExecutor(pool);
        srv.createContext("/", ex -> {
            try {
                ex.getRequestBody().readAllBytes();
                Thread.sleep(delayOf(ex.getRequestURI().getRawQuery(), delay));
                reply(ex, 200, "ok\n");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                reply(ex, 500, "interrupted\n");
            } finally {
                ex.close();
            }
        });
        srv.start();
        writeAddr(addrFile, srv.getAddress().getPort());
        System.out.println("upstream ready: delay_ms=" + delay);
        Thread.currentThread().join();
    }

    /** delayOf is the ms=N parameter of query, or def without one. */
    static long delayOf(String query, long def) {
        if (query == null) {
            return def;
        }
        for (String kv : query.split("&")) {
            if (kv.startsWith("ms=")) {
                try {
                    return Long.parseLong(kv.substring(3));
                } catch (NumberFormatException e) {
                    return def;
                }
            }
        }
        return def;
    }

    /** Thread CPU time, for calibrating the CPU work. */
    static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
}
