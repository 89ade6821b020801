package jvm

import "testing"

// TestJVMWording pins the JVM's warm-up and no-match texts as they were
// before they were written once for both runtimes.
func TestJVMWording(t *testing.T) {
	if got, want := jvmWording.WarmupText("/pool", 5, 41.23e6, 11.2e6), "/pool: the first 5 requests averaged 41.2 ms against 11.2 ms for the rest: the recording seems to include warm-up (class loading, JIT compilation); start it after warm-up with jcmd PID JFR.start (docs/jfr.md)"; got != want {
		t.Errorf("warm-up:\n got %s\nwant %s", got, want)
	}
	if got, want := jvmWording.NoMatchText("remove=Shop.x", []string{"Shop.a", "Shop.b"}), `prediction "remove=Shop.x" matches no term of the recording; closest frames: Shop.a, Shop.b`; got != want {
		t.Errorf("no-match:\n got %s\nwant %s", got, want)
	}
	if got, want := jvmWording.NoMatchText("remove=Shop.x", nil), `prediction "remove=Shop.x" matches no term of the recording`; got != want {
		t.Errorf("no-match, nothing close:\n got %s\nwant %s", got, want)
	}
}
