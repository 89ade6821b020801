package io.latscope;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/** RequestEvent is one request, begun and committed on the thread that handles it. */
@Name("latscope.Request")
@Label("Request")
@Category("latscope")
@Description("One request, from begin to end on the thread that handled it (io.latscope.Requests)")
@StackTrace(true)
final class RequestEvent extends Event {
    @Label("Route")
    @Description("The request's route: the context path, servlet path or a name the application gives")
    String route;

    @Label("Traceparent")
    @Description("The request's W3C traceparent header, when it had one")
    String traceparent;

    @Label("Request Id")
    @Description("Unique per request in this JVM, > 0")
    long requestId;

    @Label("CPU Time")
    @Description("The handling thread's CPU time (ThreadMXBean) from begin to end; -1 when the JVM cannot measure it. The request's tasks carry their own (latscope.TaskRun)")
    @Timespan(Timespan.NANOSECONDS)
    long cpuTime = -1;

    @Label("Queue Time")
    @Description("The time from the hand-off of the request's exchange to the server's executor (io.latscope.ServerQueue) to the request's begin: the executor's queue and the reading of the headers, outside the request; -1 when the executor is not wrapped")
    @Timespan(Timespan.NANOSECONDS)
    long queueTime = -1;

    @Label("Server Workers")
    @Description("The threads the server's executor runs requests on at most (io.latscope.ServerQueue: a ThreadPoolExecutor's pool size, a ForkJoinPool's parallelism); 0 when unbounded, not known or the executor is not wrapped")
    int serverWorkers;
}
