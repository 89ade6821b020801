// Load is the JVM workload of bench/jfrbench: eight handler threads, each
// on its own connection to a local upstream, run requests for the given
// number of seconds, then the program prints how many it ran.
//
// A request (Load.handle): CPU work, a short section under a shared
// monitor, a round trip to the upstream (which sleeps 1 ms before it
// answers), a 200 µs park, an allocation, and every tenth request a 2 ms
// sleep — so a recording with 1 ms thresholds holds socket reads, monitor
// enters, sleeps and execution samples from every thread.
//
// Usage: java Load SECONDS
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

public class Load {
    static final Object lock = new Object();
    static final AtomicLong count = new AtomicLong();
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        long secs = Long.parseLong(args[0]);
        ServerSocket ss = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread up = new Thread(() -> {
            while (true) {
                try {
                    Socket s = ss.accept();
                    Thread t = new Thread(() -> serve(s), "upstream");
                    t.setDaemon(true);
                    t.start();
                } catch (Exception e) {
                    return;
                }
            }
        }, "acceptor");
        up.setDaemon(true);
        up.start();
        int n = 8;
        ExecutorService pool = Executors.newFixedThreadPool(n);
        long end = System.nanoTime() + secs * 1_000_000_000L;
        for (int i = 0; i < n; i++) {
            pool.submit(() -> {
                try (Socket s = new Socket(InetAddress.getLoopbackAddress(), ss.getLocalPort())) {
                    s.setTcpNoDelay(true);
                    InputStream in = s.getInputStream();
                    OutputStream out = s.getOutputStream();
                    while (System.nanoTime() < end) {
                        handle(in, out);
                    }
                }
                return null;
            });
        }
        pool.shutdown();
        pool.awaitTermination(secs + 60, TimeUnit.SECONDS);
        System.out.println(count.get());
    }

    static void handle(InputStream in, OutputStream out) throws Exception {
        long c = count.incrementAndGet();
        burn(20_000);
        synchronized (lock) {
            burn(5_000);
        }
        out.write(1);
        out.flush();
        if (in.read() < 0) {
            throw new IllegalStateException("upstream closed");
        }
        LockSupport.parkNanos(200_000);
        byte[] b = new byte[4096 + (int) (c % 1024)];
        sink += b.length;
        if (c % 10 == 0) {
            Thread.sleep(2);
        }
    }

    static void burn(int n) {
        long h = sink;
        for (int i = 0; i < n; i++) {
            h = h * 31 + i;
        }
        sink = h;
    }

    static void serve(Socket s) {
        try (s) {
            s.setTcpNoDelay(true);
            InputStream in = s.getInputStream();
            OutputStream out = s.getOutputStream();
            while (in.read() >= 0) {
                Thread.sleep(1);
                out.write(1);
                out.flush();
            }
        } catch (Exception e) {
            // the client is gone
        }
    }
}
