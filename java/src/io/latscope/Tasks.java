package io.latscope;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RunnableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Tasks marks the hand-offs of a request's work to other threads, so that
 * latscope can follow a request's critical path across them: a
 * latscope.TaskSubmit event on the submitting thread, a latscope.TaskRun
 * event around the task on the thread that runs it (which works for the
 * submitter's request meanwhile, so nested hand-offs carry the id too) and a
 * latscope.TaskWait event around each wait for the task's result.
 *
 * <p>Only hand-offs made through Tasks are marked. A task handed over
 * otherwise (an executor not wrapped, a queue of the application's own, a
 * CompletableFuture made without {@link #supplyAsync}) shows only as the
 * waiting thread's park.
 */
public final class Tasks {
    private static final AtomicLong ids = new AtomicLong();

    private Tasks() {
    }

    /**
     * wrap returns an executor service that runs tasks on es and marks each
     * submit, execute and invoke. Its futures' get emits latscope.TaskWait
     * (so does {@link #await}). Shutting it down shuts es down.
     */
    public static ExecutorService wrap(ExecutorService es) {
        if (es instanceof Traced) {
            return es;
        }
        return new Traced(es);
    }

    /**
     * await waits for f's result like f.get(). A future of a wrapped
     * executor emits latscope.TaskWait around the wait; any other future is
     * waited for without an event.
     */
    public static <T> T await(Future<T> f) throws InterruptedException, ExecutionException {
        return f.get();
    }

    /**
     * join waits for f's result like f.join(). A future made by
     * {@link #supplyAsync} or {@link #runAsync} emits latscope.TaskWait
     * around the wait; any other is waited for without an event.
     */
    public static <T> T join(CompletableFuture<T> f) {
        return f.join();
    }

    /**
     * supplyAsync is CompletableFuture.supplyAsync(s, ex), marked: the
     * returned future's join and get emit latscope.TaskWait. Futures derived
     * from it (thenApply, ...) are plain CompletableFutures.
     */
    public static <T> CompletableFuture<T> supplyAsync(Supplier<T> s, Executor ex) {
        long rid = Requests.currentId(), tid = ids.incrementAndGet();
        TracedFuture<T> f = new TracedFuture<>(rid, tid);
        submitted(rid, tid);
        unwrap(ex).execute(() -> {
            long prev = Requests.restore(rid);
            TaskRunEvent e = runEvent(rid, tid);
            try {
                f.complete(s.get());
            } catch (Throwable t) {
                f.completeExceptionally(t);
            } finally {
                ran(e);
                Requests.restore(prev);
            }
        });
        return f;
    }

    /** runAsync is CompletableFuture.runAsync(r, ex), marked as {@link #supplyAsync}. */
    public static CompletableFuture<Void> runAsync(Runnable r, Executor ex) {
        return supplyAsync(() -> {
            r.run();
            return null;
        }, ex);
    }

    private static Executor unwrap(Executor ex) {
        return ex instanceof Traced ? ((Traced) ex).delegate : ex;
    }

    static void submitted(long rid, long tid) {
        TaskSubmitEvent e = new TaskSubmitEvent();
        e.requestId = rid;
        e.taskId = tid;
        e.commit();
    }

    static TaskRunEvent runEvent(long rid, long tid) {
        TaskRunEvent e = new TaskRunEvent();
        e.requestId = rid;
        e.taskId = tid;
        e.begin();
        e.cpu0 = CpuClock.now();
        return e;
    }

    /** ran ends and commits a task's run event with the CPU time the task took. */
    static void ran(TaskRunEvent e) {
        e.cpuTime = CpuClock.since(e.cpu0);
        e.end();
        e.commit();
    }

    static TaskWaitEvent waitEvent(long tid) {
        TaskWaitEvent e = new TaskWaitEvent();
        e.requestId = Requests.currentId();
        e.taskId = tid;
        e.begin();
        return e;
    }

    static void waited(TaskWaitEvent e) {
        e.end();
        e.commit();
    }

    /** Traced is the executor service {@link #wrap} returns. */
    private static final class Traced extends DelegatingExecutor {
        Traced(ExecutorService delegate) {
            super(delegate);
        }

        @Override
        protected <T> RunnableFuture<T> newTaskFor(Callable<T> c) {
            return new Task<>(c);
        }

        @Override
        protected <T> RunnableFuture<T> newTaskFor(Runnable r, T value) {
            return new Task<>(r, value);
        }

        @Override
        public void execute(Runnable r) {
            Task<?> t = r instanceof Task ? (Task<?>) r : new Task<Void>(r, null);
            submitted(t.rid, t.tid);
            delegate.execute(t);
        }
    }

    /** Task is a task of a wrapped executor: it carries its request and task ids. */
    private static final class Task<T> extends FutureTask<T> {
        final long rid = Requests.currentId(), tid = ids.incrementAndGet();

        Task(Callable<T> c) {
            super(c);
        }

        Task(Runnable r, T value) {
            super(r, value);
        }

        @Override
        public void run() {
            long prev = Requests.restore(rid);
            TaskRunEvent e = runEvent(rid, tid);
            try {
                super.run();
            } finally {
                ran(e);
                Requests.restore(prev);
            }
        }

        @Override
        public T get() throws InterruptedException, ExecutionException {
            TaskWaitEvent e = waitEvent(tid);
            try {
                return super.get();
            } finally {
                waited(e);
            }
        }

        @Override
        public T get(long timeout, TimeUnit unit) throws InterruptedException, ExecutionException, TimeoutException {
            TaskWaitEvent e = waitEvent(tid);
            try {
                return super.get(timeout, unit);
            } finally {
                waited(e);
            }
        }
    }

    /** TracedFuture is the future {@link #supplyAsync} returns. */
    private static final class TracedFuture<T> extends CompletableFuture<T> {
        final long rid, tid;

        TracedFuture(long rid, long tid) {
            this.rid = rid;
            this.tid = tid;
        }

        @Override
        public <U> CompletableFuture<U> newIncompleteFuture() {
            return new CompletableFuture<>();
        }

        @Override
        public T join() {
            TaskWaitEvent e = waitEvent(tid);
            try {
                return super.join();
            } finally {
                waited(e);
            }
        }

        @Override
        public T get() throws InterruptedException, ExecutionException {
            TaskWaitEvent e = waitEvent(tid);
            try {
                return super.get();
            } finally {
                waited(e);
            }
        }

        @Override
        public T get(long timeout, TimeUnit unit) throws InterruptedException, ExecutionException, TimeoutException {
            TaskWaitEvent e = waitEvent(tid);
            try {
                return super.get(timeout, unit);
            } finally {
                waited(e);
            }
        }
    }
}
