package io.latscope;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/** HoldEvent is a lock or pooled resource held by a thread, from acquire to release (io.latscope.Holds). */
@Name("latscope.Hold")
@Label("Hold")
@Category("latscope")
@Description("A lock or pooled resource held, from just after its acquire to just before its release, on the holding thread (io.latscope.Holds)")
@StackTrace(true)
final class HoldEvent extends Event {
    @Label("Name")
    @Description("What is held: the name the application gives (a lock's or a pool's)")
    String name;

    @Label("Acquired In")
    @Description("The method that began the hold (class.method), right after its acquire: the frame a pool or lock is named by")
    String site;

    @Label("Request Id")
    @Description("The request the holding thread works for; 0 outside any request")
    long requestId;

    @Label("CPU Time")
    @Description("The holding thread's CPU time (ThreadMXBean) while it held it; -1 when the JVM cannot measure it")
    @Timespan(Timespan.NANOSECONDS)
    long cpuTime = -1;

    transient long cpu0 = -1;
}
