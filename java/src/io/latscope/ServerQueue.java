package io.latscope;

import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ThreadPoolExecutor;

/**
 * ServerQueue measures the time a request waits in the HTTP server before
 * it begins: wrap the server's executor
 * ({@code server.setExecutor(ServerQueue.wrap(Executors.newFixedThreadPool(16)))})
 * and each exchange's hand-off to it is timed; the request begun on the
 * thread that runs the exchange ({@link HttpFilter}, {@link Requests#begin})
 * carries the time from that hand-off to its begin in its latscope.Request
 * event ({@code queueTime}): the executor's queue and the reading of the
 * request's headers, which a filter cannot see and a client does. The
 * event also carries the executor's workers ({@code serverWorkers}: a
 * ThreadPoolExecutor's pool size, a ForkJoinPool's parallelism; 0 when
 * unbounded or not known), so that latscope's queueing model can tell how
 * many requests the server runs at once.
 */
public final class ServerQueue {
    // [0] the hand-off's nanoTime or -1, [1] the executor's workers then
    private static final ThreadLocal<long[]> handedOff = ThreadLocal.withInitial(() -> new long[] {-1, 0});

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
        return r -> ex.execute(timed(r, 0));
    }

    /**
     * workers returns the number of threads ex runs tasks on at most: a
     * ThreadPoolExecutor's core size when its queue is unbounded (it never
     * grows beyond it), else its maximum; a ForkJoinPool's parallelism; 0
     * when unbounded or not known.
     */
    static int workers(Executor ex) {
        if (ex instanceof ThreadPoolExecutor) {
            ThreadPoolExecutor t = (ThreadPoolExecutor) ex;
            long capacity = (long) t.getQueue().remainingCapacity() + t.getQueue().size();
            int n = capacity >= Integer.MAX_VALUE ? t.getCorePoolSize() : t.getMaximumPoolSize();
            return n == Integer.MAX_VALUE ? 0 : n;
        }
        if (ex instanceof ForkJoinPool) {
            return ((ForkJoinPool) ex).getParallelism();
        }
        return 0;
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

    /** takenWorkers returns the workers of the executor of the hand-off take last returned. */
    static int takenWorkers() {
        return (int) handedOff.get()[1];
    }

    private static Runnable timed(Runnable r, int workers) {
        long at = System.nanoTime();
        return () -> {
            long[] h = handedOff.get();
            long prev = h[0], prevWorkers = h[1];
            h[0] = at;
            h[1] = workers;
            try {
                r.run();
            } finally {
                h[0] = prev;
                h[1] = prevWorkers;
            }
        };
    }

    private static final class Timed extends DelegatingExecutor {
        Timed(ExecutorService delegate) {
            super(delegate);
        }

        @Override
        public void execute(Runnable r) {
            delegate.execute(timed(r, workers(delegate)));
        }
    }
}
