// LibDemo is the test program of package java: a com.sun.net.httpserver
// service instrumented with io.latscope, driven by its own client.
//
// Usage: java LibDemo N
//
// The service's context /demo (HttpFilter) handles a request in this order:
//   sleep 10 ms on the request thread
//   submit a task to a wrapped executor (Tasks.wrap): the task sleeps 30 ms
//     and submits a nested task of its own that sleeps 5 ms, which it awaits
//   sleep 5 ms on the request thread, then Tasks.await the task
//   Tasks.supplyAsync a task that sleeps 15 ms on the same executor, and
//     Tasks.join it
// so a request lasts at least 10 + 30 + 5 + 15 = 60 ms. The client sends N
// requests one after another, request i with the header
// traceparent: 00-<32 hex digits of i>-00f067aa0ba902b7-01.
import com.sun.net.httpserver.HttpServer;
import io.latscope.HttpFilter;
import io.latscope.Tasks;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.URL;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

public class LibDemo {
    static ExecutorService pool;

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        pool = Tasks.wrap(Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "demo-executor");
            t.setDaemon(true);
            return t;
        }));
        HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
        s.createContext("/demo", ex -> {
            try {
                handle();
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
            byte[] b = "ok".getBytes();
            ex.sendResponseHeaders(200, b.length);
            try (OutputStream o = ex.getResponseBody()) {
                o.write(b);
            }
        }).getFilters().add(new HttpFilter());
        s.setExecutor(Executors.newFixedThreadPool(2));
        s.start();
        for (int i = 1; i <= n; i++) {
            URL u = new URL("http://127.0.0.1:" + s.getAddress().getPort() + "/demo");
            HttpURLConnection c = (HttpURLConnection) u.openConnection();
            c.setRequestProperty("traceparent", String.format("00-%032x-00f067aa0ba902b7-01", i));
            try (InputStream in = c.getInputStream()) {
                in.readAllBytes();
            }
        }
        s.stop(0);
        System.exit(0);
    }

    static void handle() throws Exception {
        Thread.sleep(10);
        Future<?> f = pool.submit(() -> {
            Thread.sleep(30);
            return Tasks.await(pool.submit(() -> {
                Thread.sleep(5);
                return null;
            }));
        });
        Thread.sleep(5);
        Tasks.await(f);
        CompletableFuture<Void> g = Tasks.runAsync(() -> {
            try {
                Thread.sleep(15);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, pool);
        Tasks.join(g);
    }
}
