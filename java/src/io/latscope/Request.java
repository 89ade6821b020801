package io.latscope;

/**
 * Request is a request begun with {@link Requests#begin}. End it on the
 * thread that began it, once: {@link #end} commits its latscope.Request
 * event and restores the thread's previous request, if any.
 * try-with-resources ends it.
 */
public final class Request implements AutoCloseable {
    private final RequestEvent event = new RequestEvent();
    private final long id;
    private final long previous;
    private final Thread thread;
    private final long cpu0;
    private boolean ended;

    Request(String route, String traceparent, long id, long previous) {
        this.id = id;
        this.previous = previous;
        this.thread = Thread.currentThread();
        event.route = route;
        event.traceparent = traceparent;
        event.requestId = id;
        long handed = ServerQueue.take();
        event.begin();
        cpu0 = CpuClock.now();
        if (handed >= 0) {
            event.queueTime = Math.max(0, System.nanoTime() - handed);
            event.serverWorkers = ServerQueue.takenWorkers();
        }
    }

    /** id returns the request's id: unique in this JVM, > 0. */
    public long id() {
        return id;
    }

    /**
     * end commits the request's event. A second call does nothing. Called on
     * another thread than the one that began the request, it throws
     * IllegalStateException: the event's thread would be wrong.
     */
    public void end() {
        if (ended) {
            return;
        }
        if (Thread.currentThread() != thread) {
            throw new IllegalStateException("io.latscope.Request.end: called on thread " + Thread.currentThread().getName()
                    + ", begun on " + thread.getName() + ": end a request on the thread that began it");
        }
        ended = true;
        event.cpuTime = CpuClock.since(cpu0);
        event.end();
        event.commit();
        Requests.restore(previous);
    }

    /** close ends the request (see {@link #end}). */
    @Override
    public void close() {
        end();
    }
}
