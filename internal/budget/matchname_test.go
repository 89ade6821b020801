package budget

import "testing"

// TestMatchNameMajorVersion: a frame matches the name it is printed by,
// whose major-version element is replaced by the package's name (#36).
func TestMatchNameMajorVersion(t *testing.T) {
	for _, c := range []struct {
		fn, name string
		want     bool
	}{
		{"go.etcd.io/raft/v3.(*node).run", "raft.(*node).run", true},
		{"go.etcd.io/raft/v3.(*node).run", "(*node).run", true},
		{"go.etcd.io/raft/v3.(*node).run", "v3.(*node).run", true},
		{"go.etcd.io/raft/v3.(*node).run", "run", true},
		{"go.etcd.io/raft/v3.(*node).run", "xraft.(*node).run", false},
		{"main.callUpstream", "callUpstream", true},
		{"main.callUpstream", "Upstream", false},
		{"github.com/x/store.(*Store).query", "store.(*Store).query", true},
	} {
		if got := MatchName(c.fn, c.name); got != c.want {
			t.Errorf("MatchName(%q, %q) = %v, want %v", c.fn, c.name, got, c.want)
		}
	}
}
