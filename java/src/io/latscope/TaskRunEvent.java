package io.latscope;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/** TaskRunEvent is a task running on its executor thread. */
@Name("latscope.TaskRun")
@Label("Task Run")
@Category("latscope")
@Description("A task running on its executor thread, from start to completion (io.latscope.Tasks)")
@StackTrace(true)
final class TaskRunEvent extends Event {
    @Label("Request Id")
    @Description("The request the task works for; 0 outside any request")
    long requestId;

    @Label("Task Id")
    @Description("The task, as in its latscope.TaskSubmit event")
    long taskId;

    @Label("CPU Time")
    @Description("The executor thread's CPU time (ThreadMXBean) while it ran the task; -1 when the JVM cannot measure it")
    @Timespan(Timespan.NANOSECONDS)
    long cpuTime = -1;

    /** cpu0 is the thread's CPU time at begin (transient: not an event field). */
    transient long cpu0 = -1;
}
