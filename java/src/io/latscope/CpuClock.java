package io.latscope;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * CpuClock reads the current thread's CPU time (user + system) in
 * nanoseconds from the JVM's ThreadMXBean, the clock the library's
 * latscope.Request and latscope.TaskRun events take their cpuTime from.
 * JFR's execution samples miss CPU spent in native code and intrinsics
 * (a SHA-256 loop leaves almost no samples); this clock does not.
 */
final class CpuClock {
    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    /** ON is false when the JVM cannot measure thread CPU time: the events then say -1. */
    static final boolean ON = init();

    private CpuClock() {
    }

    private static boolean init() {
        try {
            if (!MX.isCurrentThreadCpuTimeSupported()) {
                return false;
            }
            if (!MX.isThreadCpuTimeEnabled()) {
                MX.setThreadCpuTimeEnabled(true);
            }
            return MX.getCurrentThreadCpuTime() >= 0;
        } catch (UnsupportedOperationException | SecurityException e) {
            return false;
        }
    }

    /** now returns the current thread's CPU time in ns, or -1 when it cannot be measured. */
    static long now() {
        return ON ? MX.getCurrentThreadCpuTime() : -1;
    }

    /** since returns the current thread's CPU time since start (a value of {@link #now}), or -1. */
    static long since(long start) {
        if (start < 0) {
            return -1;
        }
        long n = now();
        return n < 0 ? -1 : n - start;
    }
}
