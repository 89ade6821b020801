package tier

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

func TestList(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(rel, src string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/a_test.go", `package a
import ("testing"; "github.com/latscope/latscope/internal/tier")
func TestLive(t *testing.T) { tier.Timing(t); t.Log("x") }
func TestFast(t *testing.T) { t.Log("x") }
func TestNested(t *testing.T) { t.Run("x", func(t *testing.T) { tier.Timing(t) }) }
func helper(t *testing.T) { tier.Timing(t) }
`)
	write("b/b_test.go", `package b
import ("testing"; tr "github.com/latscope/latscope/internal/tier")
func TestRenamed(t *testing.T) { tr.Timing(t) }
func TestPhases(t *testing.T) { tr.Busy(t) }
`)
	write("a/testdata/x_test.go", `package x
func TestIgnored(t *testing.T) { tier.Timing(t) }
`)
	ts, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ts.Pattern(), `^(TestLive|TestNested|TestPhases|TestRenamed)$`; got != want {
		t.Errorf("Pattern = %s, want %s", got, want)
	}
	busy, err := ListBusy(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := busy.Pattern(), `^(TestPhases)$`; got != want {
		t.Errorf("ListBusy: Pattern = %s, want %s", got, want)
	}
	quiet, err := ListQuiet(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := quiet.Pattern(), `^(TestLive|TestNested|TestRenamed)$`; got != want {
		t.Errorf("ListQuiet: Pattern = %s, want %s", got, want)
	}
	if got := ts.Packages(); len(got) != 2 || got[0] != "./a" || got[1] != "./b" {
		t.Errorf("Packages = %v", got)
	}
	re := regexp.MustCompile(ts.Pattern())
	if re.MatchString("TestLiveX") || re.MatchString("TestFast") {
		t.Errorf("pattern %s matches too much", re)
	}
}

func TestTimingSkips(t *testing.T) {
	t.Setenv(Env, "")
	ran := false
	t.Run("inner", func(t *testing.T) {
		Timing(t)
		ran = true
	})
	if ran {
		t.Error("a timing test ran outside the timing tier")
	}
}
