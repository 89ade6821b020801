package agent

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLightDeps: importing agent links no router, no Prometheus client and
// no protobuf, nor anything else outside the standard library but the
// agent's own modules. The router adapters (agentchi, agentgin, agentecho,
// agentmux), the pgx tracer (agentpgx) and the Prometheus metrics
// (agentprom) are modules of their own; `go list -deps` of package agent
// must name none of what they link.
func TestLightDeps(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(gobin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}} {{with .Module}}{{.Path}}{{end}}{{end}}", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	ours := map[string]bool{ // the modules the agent is made of
		"github.com/latscope/latscope/agent":             true,
		"github.com/latscope/latscope/tracelog":          true,
		"github.com/latscope/latscope/internal/hostsig":  true,
		"github.com/latscope/latscope/internal/quantile": true,
	}
	var pkgs []string
	for line := range strings.Lines(string(out)) {
		pkg, mod, _ := strings.Cut(strings.TrimSpace(line), " ")
		if pkg == "" {
			continue
		}
		pkgs = append(pkgs, pkg)
		for _, heavy := range []string{"github.com/prometheus/", "google.golang.org/protobuf/", "github.com/go-chi/", "github.com/gin-gonic/", "github.com/labstack/", "github.com/gorilla/", "github.com/jackc/"} {
			if strings.HasPrefix(pkg, heavy) {
				t.Errorf("package agent links %s", pkg)
			}
		}
		if !ours[mod] {
			t.Errorf("package agent links %s, of module %q: only the standard library and the agent's own modules %v may be linked", pkg, mod, ours)
		}
	}
	if len(pkgs) == 0 || pkgs[len(pkgs)-1] != "github.com/latscope/latscope/agent" {
		t.Fatalf("go list -deps did not list the agent last:\n%s", out)
	}
	t.Logf("%d packages outside the standard library: %v", len(pkgs), pkgs)
}
