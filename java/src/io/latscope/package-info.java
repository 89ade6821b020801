/**
 * io.latscope marks requests and their hand-offs in JDK Flight Recorder
 * recordings, for {@code latscope analyze rec.jfr} (docs/jfr.md in the
 * latscope repository): latscope.Request (one request on its thread),
 * latscope.TaskSubmit, latscope.TaskRun and latscope.TaskWait (a task
 * handed to another thread, run there, and waited for). Plain JDK 17, no
 * dependencies; the events are enabled with threshold 0 and stack traces in
 * every recording unless a settings file disables them.
 */
package io.latscope;
