package htmlreport

import (
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/render"
)

// TestBudgetLeadNamesTheTerm: the headline names the biggest term by its
// name (the call path that tells it apart), as the budget beside it does,
// not by the shared helper's innermost frame (issue #36).
func TestBudgetLeadNamesTheTerm(t *testing.T) {
	g := &render.Group{
		Requests: render.Requests{Count: 10, Mean: render.Duration(40e6)},
		Terms: []render.Term{
			{Name: "main.priceItems › get", Frame: "main.get", AppPath: []string{"main.handle", "main.priceItems", "main.get"},
				Kind: "network", Mechanism: "net.(*netFD).Read", Critical: render.Duration(30e6), CriticalPct: 75},
			{Name: "main.loadUser › get", Frame: "main.get", AppPath: []string{"main.handle", "main.loadUser", "main.get"},
				Kind: "network", Mechanism: "net.(*netFD).Read", Critical: render.Duration(8e6), CriticalPct: 20},
		},
	}
	lead := strings.Join(budgetLead(g, Options{}), "")
	if !strings.Contains(lead, "is main.priceItems › get (network in net.(*netFD).Read)") {
		t.Errorf("headline %q: want the term's name, main.priceItems › get", lead)
	}
	g.Terms[0].Name = ""
	if lead := strings.Join(budgetLead(g, Options{}), ""); !strings.Contains(lead, "is main.get (") {
		t.Errorf("headline %q: without a name, the frame", lead)
	}
}
