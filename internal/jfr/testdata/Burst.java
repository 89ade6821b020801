// Burst is the JVM workload of the scheduler-churn tests (internal/jfr/churntest,
// docs/jfr-churn.md): a ForkJoinPool woken in bursts of tiny tasks, the case
// of docs/method.md §10 (an actor's events dispatched to a 32-worker pool
// that woke for every burst and went back to sleep), and the fix, the same
// work batched.
//
// Usage: java Burst MODE MILLIS [EVERY_US BATCH WORK PARALLELISM]
//
//   MODE         burst: each event of a burst is its own task (pool.execute
//                per event), so every burst wakes the idle workers, which
//                scan the queues, find little or nothing, and park again;
//                batch: the same events, one task per burst that handles
//                them all (the fix: one wakeup per burst);
//                executor: as burst, on a ThreadPoolExecutor of the same
//                width over a LinkedBlockingQueue (getTask, take, signal)
//   MILLIS       how long to run
//   EVERY_US     interval between bursts, µs (default 1000)
//   BATCH        events per burst (default 256)
//   WORK         rounds of arithmetic per event (default 300: a few hundred ns)
//   PARALLELISM  the pool's width (default 32, as in the seed case)
//
// The dispatcher thread wakes every EVERY_US, hands the burst to the pool
// and does not wait for it. At the end Burst prints one line on standard
// output: "events=N cpu_ns=C wall_ns=W" — the events handled and the
// process's CPU time (OperatingSystemMXBean.getProcessCpuTime, user and
// system, an instrument independent of JFR) over the last two thirds of the
// run, after the JIT has compiled the loop.
//
// The work is plain Java arithmetic: JFR's sampler drops samples taken
// inside intrinsics (SHA-256's, say), which would hide the work.
import java.lang.management.ManagementFactory;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

public class Burst {
    static final LongAdder handled = new LongAdder();
    static volatile long sink;
    static int work;

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        long millis = Long.parseLong(args[1]);
        long everyUs = args.length > 2 ? Long.parseLong(args[2]) : 1000;
        int batch = args.length > 3 ? Integer.parseInt(args[3]) : 256;
        work = args.length > 4 ? Integer.parseInt(args[4]) : 300;
        int parallelism = args.length > 5 ? Integer.parseInt(args[5]) : 32;
        boolean batched;
        ExecutorService pool;
        switch (mode) {
            case "burst": batched = false; pool = new ForkJoinPool(parallelism); break;
            case "batch": batched = true; pool = new ForkJoinPool(parallelism); break;
            case "executor":
                batched = false;
                pool = new ThreadPoolExecutor(parallelism, parallelism, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>());
                break;
            default: throw new IllegalArgumentException("mode " + mode + ": want burst, batch or executor");
        }
        com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long start = System.nanoTime();
        long end = start + TimeUnit.MILLISECONDS.toNanos(millis);
        long warm = start + TimeUnit.MILLISECONDS.toNanos(millis / 3);
        long every = TimeUnit.MICROSECONDS.toNanos(everyUs);
        long next = start;
        long seq = 0;
        long cpu0 = -1, wall0 = 0, events0 = 0;
        while (next < end) {
            if (cpu0 < 0 && next >= warm) {
                cpu0 = os.getProcessCpuTime();
                wall0 = System.nanoTime();
                events0 = handled.sum();
            }
            dispatch(pool, batched, batch, seq);
            seq += batch;
            next += every;
            long now;
            while ((now = System.nanoTime()) < next) {
                LockSupport.parkNanos(next - now);
            }
        }
        pool.shutdown();
        pool.awaitTermination(10, TimeUnit.SECONDS);
        long cpu = os.getProcessCpuTime() - cpu0, wall = System.nanoTime() - wall0;
        System.out.println("events=" + (handled.sum() - events0) + " cpu_ns=" + cpu + " wall_ns=" + wall);
    }

    // dispatch hands one burst of events to the pool: a task per event, or
    // one task for all of them.
    static void dispatch(ExecutorService pool, boolean batched, int batch, long seq) {
        if (batched) {
            pool.execute(() -> {
                for (int i = 0; i < batch; i++) {
                    handle(seq + i);
                }
            });
            return;
        }
        for (int i = 0; i < batch; i++) {
            long ev = seq + i;
            pool.execute(() -> handle(ev));
        }
    }

    // handle is one event's work: WORK rounds of an xorshift hash.
    static void handle(long ev) {
        long x = ev * 0x9E3779B97F4A7C15L + 1;
        for (int i = 0; i < work; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        sink = x;
        handled.increment();
    }
}
