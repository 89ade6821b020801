package pgtest_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/latscope/latscope/internal/pgcluster/pgtest"
	"github.com/latscope/latscope/internal/tier"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestStartAndShared(t *testing.T) {
	tier.Busy(t)
	a, b := pgtest.Shared(t), pgtest.Shared(t)
	if a != b {
		t.Fatalf("Shared returned two clusters: %s and %s", a.Dir(), b.Dir())
	}
	c := pgtest.Start(t)
	if c.Port() == a.Port() {
		t.Fatalf("Start and Shared share port %d", c.Port())
	}
	for _, cl := range []string{a.DSN(), c.URL()} {
		conn, err := pgx.Connect(context.Background(), cl)
		if err != nil {
			t.Fatalf("connect %s: %v", cl, err)
		}
		if err := conn.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}
