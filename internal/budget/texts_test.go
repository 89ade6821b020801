package budget

import "testing"

// TestGoWording pins the Go trace's warm-up and no-match texts as they
// were before they were written once for both runtimes.
func TestGoWording(t *testing.T) {
	if got, want := goWording.WarmupText("GET /x", 5, 41.23e6, 11.2e6), "GET /x: the first 5 requests averaged 41.2 ms against 11.2 ms for the rest: the window seems to include warm-up; start the trace after warm-up"; got != want {
		t.Errorf("warm-up:\n got %s\nwant %s", got, want)
	}
	if got, want := goWording.NoMatchText("remove=lock", []string{"a.lock", "b.Lock"}), `prediction "remove=lock" matches no term (closest: a.lock, b.Lock)`; got != want {
		t.Errorf("no-match:\n got %s\nwant %s", got, want)
	}
	if got, want := goWording.NoMatchText("remove=lock", nil), `prediction "remove=lock" matches no term`; got != want {
		t.Errorf("no-match, nothing close:\n got %s\nwant %s", got, want)
	}
}
