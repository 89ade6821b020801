package io.latscope;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

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
}
