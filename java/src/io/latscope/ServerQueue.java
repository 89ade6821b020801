package io.latscope;

import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;

/**
 * ServerQueue measures the time a request waits in the HTTP server before
 * it begins: wrap the server's executor
 * ({@code server.setExecutor(ServerQueue.wrap(Executors.newFixedThreadPool(16)))})
 * and each exchange's hand-off to it is timed; the request begun on the
 * thread that runs the exchange ({@link HttpFilter}, {@link Requests#begin})
 * carries the time from that hand-off to its begin in its latscope.Request
 * event ({@code queueTime}): the executor's queue and the reading of the
 * request's headers, which a filter cannot see and a client does.
 */
public final class ServerQueue {
    private static final ThreadLocal<long[]> handedOff = ThreadLocal.withInitial(() -> new long[] {-1});

    private ServerQueue() {
    }

    /** wrap returns an executor service that runs on es and times each task's wait to run. */
    public static ExecutorService wrap(ExecutorService es) {
        return new Timed(es);
    }

    /** wrap returns an executor that runs on ex and times each task's wait to run. */
    public static Executor wrap(Executor ex) {
        if (ex instanceof ExecutorService) {
            return wrap((ExecutorService) ex);
        }
        return r -> ex.execute(timed(r));
    }

    /**
     * since returns the nanoTime at which the task the current thread runs
     * was handed to a wrapped executor, or -1; the first call in a task
     * takes it, so a nested request does not count it again.
     */
    static long take() {
        long[] h = handedOff.get();
        long t = h[0];
        h[0] = -1;
        return t;
    }

    private static Runnable timed(Runnable r) {
        long at = System.nanoTime();
        return () -> {
            long[] h = handedOff.get();
            long prev = h[0];
            h[0] = at;
            try {
                r.run();
            } finally {
                h[0] = prev;
            }
        };
    }

    private static final class Timed extends DelegatingExecutor {
        Timed(ExecutorService delegate) {
            super(delegate);
        }

        @Override
        public void execute(Runnable r) {
            delegate.execute(timed(r));
        }
    }
}
