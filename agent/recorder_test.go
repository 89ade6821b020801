package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestPrune(t *testing.T) {
	tests := []struct {
		name     string
		sizes    []int // oldest first
		keep     int   // index of the file just written
		maxFiles int
		maxBytes int64
		want     []int // indexes left
	}{
		{"within bounds", []int{10, 10}, 1, 3, 100, []int{0, 1}},
		{"too many files", []int{10, 10, 10, 10}, 3, 2, 100, []int{2, 3}},
		{"too many bytes", []int{40, 40, 40}, 2, 10, 90, []int{1, 2}},
		{"the newest stays even when alone too big", []int{10, 500}, 1, 10, 100, []int{1}},
		{"the kept file is skipped, not counted out", []int{10, 10, 10}, 0, 1, 100, []int{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			names := make([]string, len(tt.sizes))
			for i, n := range tt.sizes {
				names[i] = fmt.Sprintf("%s2026010%dT000000.000000Z-p1-manual%s", snapshotPrefix, i, snapshotSuffix)
				if err := os.WriteFile(filepath.Join(dir, names[i]), make([]byte, n), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			other := filepath.Join(dir, "notes.txt") // not ours: never touched
			os.WriteFile(other, make([]byte, 1000), 0o644)
			d, err := openSnapDir(dir, false)
			if err != nil {
				t.Fatal(err)
			}
			defer d.close()
			if err := prune(d, names[tt.keep], tt.maxFiles, tt.maxBytes); err != nil {
				t.Fatal(err)
			}
			files, err := d.list()
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, f := range files {
				got = append(got, slices.Index(names, f.Name))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("left %v, want %v", got, tt.want)
			}
			if _, err := os.Stat(other); err != nil {
				t.Errorf("prune removed a file that is not a snapshot: %v", err)
			}
		})
	}
}

func TestRemoveStaleTemps(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, ".latscope-1.tmp")
	fresh := filepath.Join(dir, ".latscope-2.tmp")
	for _, p := range []string{stale, fresh} {
		if err := os.WriteFile(p, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(stale, old, old)
	d, err := openSnapDir(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	d.removeStaleTemps(time.Hour)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temporary file still there (%v)", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a fresh temporary file (maybe another process's) was removed: %v", err)
	}
}

func TestIsSnapshotName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"latscope-20260101T000000.000000Z-p1-manual.trace", true},
		{"latscope-x.trace", true},
		{"../latscope-x.trace", false},
		{"latscope-a/../../etc/passwd.trace", false},
		{`latscope-a\b.trace`, false},
		{".latscope-1.tmp", false},
		{"latscope-x.trace.tmp", false},
	}
	for _, tt := range tests {
		if got := isSnapshotName(tt.name); got != tt.ok {
			t.Errorf("isSnapshotName(%q) = %v, want %v", tt.name, got, tt.ok)
		}
	}
}

// TestSnapshotRateLimit: automatic snapshots are at most one per
// MinInterval, and a snapshot never leaves a temporary file behind.
func TestSnapshotRateLimit(t *testing.T) {
	done := make(chan string, 10)
	dir := t.TempDir()
	a, err := New(Options{Dir: dir, MinInterval: time.Hour, OnSnapshot: func(p string, err error) {
		if err != nil {
			t.Error(err)
		}
		done <- p
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for range 5 {
		a.rec.trigger("slow-1ms")
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("no snapshot")
	}
	a.rec.wg.Wait()
	files, _ := a.rec.dir.list()
	if len(files) != 1 {
		t.Errorf("%d snapshots after 5 triggers within MinInterval, want 1", len(files))
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, tempPattern)); len(tmps) > 0 {
		t.Errorf("temporary files left: %v", tmps)
	}
}
