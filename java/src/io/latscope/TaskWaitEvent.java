package io.latscope;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** TaskWaitEvent is a thread waiting for a task's result (Future.get, CompletableFuture.join). */
@Name("latscope.TaskWait")
@Label("Task Wait")
@Category("latscope")
@Description("A thread waiting for a task's result: Future.get or CompletableFuture.join (io.latscope.Tasks)")
@StackTrace(true)
final class TaskWaitEvent extends Event {
    @Label("Request Id")
    @Description("The request the waiting thread works for; 0 outside any request")
    long requestId;

    @Label("Task Id")
    @Description("The task waited for, as in its latscope.TaskSubmit event")
    long taskId;
}
