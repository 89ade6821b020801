package io.latscope;

import java.util.concurrent.locks.Lock;
import java.lang.StackWalker.StackFrame;
import java.util.function.Supplier;

/**
 * Holds marks the time a thread holds a lock or a pooled resource (a
 * connection, a permit) with a latscope.Hold event, from just after its
 * acquire to just before its release, with the thread's CPU time meanwhile.
 * latscope charges a pool's or lock's demand (what `latscope predict
 * --pool NAME:SIZE` queues for) from it: the waits inside the hold, and its
 * CPU, which JFR's samples miss.
 *
 * <p>Call {@link #begin} in the method that acquires, right after the
 * acquire: the hold is named by that method (its frame, as
 * {@code ConnPool.borrow}), which is also where JFR records the wait for
 * it. For a monitor or a {@link Lock}, {@link #locked} does both.
 */
public final class Holds {
    private Holds() {
    }

    /** Hold is a hold begun by {@link #begin}; end it on the same thread, right before the release. */
    public static final class Hold implements AutoCloseable {
        private final HoldEvent event;
        private boolean ended;

        Hold(String name) {
            event = new HoldEvent();
            event.name = name;
            event.site = site();
            event.requestId = Requests.currentId();
            event.begin();
            event.cpu0 = CpuClock.now();
        }

        /** end commits the hold's event; a second call does nothing. */
        public void end() {
            if (ended) {
                return;
            }
            ended = true;
            event.cpuTime = CpuClock.since(event.cpu0);
            event.end();
            event.commit();
        }

        @Override
        public void close() {
            end();
        }
    }

    private static final StackWalker WALKER = StackWalker.getInstance();

    /**
     * site names the method that began the hold: the first frame outside
     * io.latscope. JFR takes an event's stack when it is committed, at the
     * release, which may be in another method (ConnPool.release).
     */
    static String site() {
        return WALKER.walk(s -> s.filter(f -> !f.getClassName().startsWith("io.latscope."))
                .findFirst().map(f -> f.getClassName() + "." + f.getMethodName()).orElse(""));
    }

    /** begin starts a hold of name on the current thread: call it right after the acquire. */
    public static Hold begin(String name) {
        return new Hold(name);
    }

    /** locked runs body holding monitor (synchronized), marked as a hold of name. */
    public static void locked(Object monitor, String name, Runnable body) {
        synchronized (monitor) {
            try (Hold h = begin(name)) {
                body.run();
            }
        }
    }

    /** locked returns body's result, computed holding monitor (synchronized), marked as a hold of name. */
    public static <T> T locked(Object monitor, String name, Supplier<T> body) {
        synchronized (monitor) {
            try (Hold h = begin(name)) {
                return body.get();
            }
        }
    }

    /** locked runs body holding lock, marked as a hold of name. */
    public static void locked(Lock lock, String name, Runnable body) {
        lock.lock();
        try (Hold h = begin(name)) {
            body.run();
        } finally {
            lock.unlock();
        }
    }
}
