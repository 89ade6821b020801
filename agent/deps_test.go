package agent

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoRouterLinked: importing agent links no router library; the router
// adapters live in packages of their own (agentchi, agentgin, agentecho,
// agentmux). `go list -deps` of package agent must name none.
func TestNoRouterLinked(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(gobin, "list", "-deps", "github.com/latscope/latscope/agent").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	pkgs := strings.Fields(string(out))
	for _, p := range pkgs {
		for _, router := range []string{"github.com/go-chi/", "github.com/gin-gonic/", "github.com/labstack/", "github.com/gorilla/"} {
			if strings.HasPrefix(p, router) {
				t.Errorf("package agent links %s", p)
			}
		}
	}
	if !strings.Contains(string(out), "github.com/latscope/latscope/agent\n") {
		t.Fatalf("go list -deps did not list the agent:\n%s", out)
	}
	t.Logf("%d packages, no router", len(pkgs))
}
