package dbwait

import "testing"

func TestPIDList(t *testing.T) {
	for _, tc := range []struct {
		pids []int
		want string
	}{
		{[]int{7}, "PID 7"},
		{[]int{9, 7, 8}, "PIDs 7, 8, 9"},
		{[]int{1, 2, 3, 4, 5, 6, 7}, "PIDs 1, 2, 3, 4, 5 and 2 more"},
	} {
		set := map[int]bool{}
		for _, p := range tc.pids {
			set[p] = true
		}
		if got := pidList(set); got != tc.want {
			t.Errorf("pidList(%v) = %q, want %q", tc.pids, got, tc.want)
		}
	}
}
