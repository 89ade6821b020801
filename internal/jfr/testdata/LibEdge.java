// LibEdge exercises the edges of io.latscope in one request and prints
// one line per check ("ok NAME" or "FAIL NAME: why"), for package java's
// test, which also checks the events.
//
//   execute        Tasks.wrap(es).execute(r): TaskSubmit and TaskRun, no wait
//   invokeAll      two callables: two tasks, each waited for by invokeAll
//   throws         Tasks.supplyAsync of a supplier that throws: the run and
//                  the wait (join throws) are still recorded
//   wrap twice     wrapping a wrapped executor returns it
//   wrong thread   Request.end on another thread throws
//   current id     Requests.currentId inside a task is the request's
import io.latscope.Request;
import io.latscope.Requests;
import io.latscope.Tasks;
import java.util.List;
import java.util.concurrent.*;

public class LibEdge {
    static void check(String name, boolean ok, String why) {
        System.out.println((ok ? "ok " : "FAIL ") + name + (ok ? "" : ": " + why));
    }

    public static void main(String[] args) throws Exception {
        ExecutorService raw = Executors.newFixedThreadPool(2);
        ExecutorService es = Tasks.wrap(raw);
        check("wrap twice", Tasks.wrap(es) == es, "a second wrap made a new executor");
        Request r = Requests.begin("/edge", null);
        long id = r.id();
        CountDownLatch ran = new CountDownLatch(1);
        long[] seen = new long[1];
        es.execute(() -> {
            seen[0] = Requests.currentId();
            ran.countDown();
        });
        ran.await();
        check("current id", seen[0] == id, "task saw " + seen[0] + ", want " + id);
        List<Future<Integer>> fs = es.invokeAll(List.of(() -> 1, () -> 2));
        check("invokeAll", fs.get(0).get() + fs.get(1).get() == 3, "wrong results");
        CompletableFuture<Integer> bad = Tasks.supplyAsync(() -> {
            throw new IllegalStateException("boom");
        }, es);
        try {
            Tasks.join(bad);
            check("throws", false, "join returned");
        } catch (CompletionException e) {
            check("throws", e.getCause() instanceof IllegalStateException, "cause " + e.getCause());
        }
        Future<?> other = raw.submit(() -> {
            try {
                r.end();
                return "ended";
            } catch (IllegalStateException e) {
                return "threw";
            }
        });
        check("wrong thread", "threw".equals(other.get()), "end on another thread did not throw");
        r.end();
        r.end(); // a second end does nothing
        check("restored", Requests.currentId() == 0, "current id after end: " + Requests.currentId());
        es.shutdown();
        System.exit(0);
    }
}
