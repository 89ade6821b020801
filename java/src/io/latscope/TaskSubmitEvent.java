package io.latscope;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** TaskSubmitEvent marks a task handed to an executor, on the submitting thread (instant). */
@Name("latscope.TaskSubmit")
@Label("Task Submit")
@Category("latscope")
@Description("A task handed to an executor, on the submitting thread (io.latscope.Tasks)")
@StackTrace(true)
final class TaskSubmitEvent extends Event {
    @Label("Request Id")
    @Description("The request the submitting thread worked for; 0 outside any request")
    long requestId;

    @Label("Task Id")
    @Description("Unique per task in this JVM, > 0")
    long taskId;
}
