package io.latscope;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Requests begins requests and tells which request the current thread
 * works for. A thread works for the request it began last and has not yet
 * ended, or for the request of the task it runs (see {@link Tasks}).
 */
public final class Requests {
    private static final AtomicLong ids = new AtomicLong();
    private static final ThreadLocal<long[]> current = ThreadLocal.withInitial(() -> new long[1]);

    private Requests() {
    }

    /**
     * begin starts a request on the current thread. route names the
     * request's type (a path pattern, not the full URL); traceparent is the
     * request's W3C traceparent header, or null. End the request on this
     * thread with {@link Request#end} (or try-with-resources).
     */
    public static Request begin(String route, String traceparent) {
        long id = ids.incrementAndGet();
        long[] c = current.get();
        Request r = new Request(route, traceparent, id, c[0]);
        c[0] = id;
        return r;
    }

    /** currentId returns the id of the request the current thread works for, or 0. */
    public static long currentId() {
        return current.get()[0];
    }

    /** restore sets the current thread's request id and returns the previous one. */
    static long restore(long id) {
        long[] c = current.get();
        long prev = c[0];
        c[0] = id;
        return prev;
    }
}
