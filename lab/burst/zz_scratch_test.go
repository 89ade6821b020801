package burst

import (
	"os"
	"testing"

	"github.com/latscope/latscope/lab"
)

func TestZZDefault(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	env := testEnv(t, lab.Default)
	env.Out = "/tmp/burst-default"
	os.MkdirAll(env.Out, 0o755)
	out, err := Run(t.Context(), env)
	if err != nil {
		t.Fatal(err)
	}
	md := out.Markdown + "\nchecks:\n"
	for _, c := range out.Checks {
		md += "- " + c.Name + ": " + c.Want + " / " + c.Got + "\n"
	}
	os.WriteFile("/tmp/burst-default.md", []byte(md), 0o644)
}
