package opterr

import (
	"errors"
	"fmt"
	"testing"
)

func TestFlagged(t *testing.T) {
	flag := func(o string) string {
		if o == "unknown" {
			return ""
		}
		return "--" + o
	}
	inner := Wrap("task", errors.New(`"x" matches nothing`))
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"bare", inner, `--task "x" matches nothing`},
		{"wrapped", fmt.Errorf("pprof export: %w", inner), `pprof export: --task "x" matches nothing`},
		{"no option error", errors.New("plain"), "plain"},
		{"option without a flag", Wrap("unknown", errors.New("bad")), "unknown bad"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Flagged(tt.err.Error(), tt.err, flag); got != tt.want {
				t.Errorf("Flagged = %q, want %q", got, tt.want)
			}
		})
	}
	if Wrap("task", nil) != nil {
		t.Error("Wrap(nil) is not nil")
	}
	if got := inner.Error(); got != `task "x" matches nothing` {
		t.Errorf("library text = %q", got)
	}
}
