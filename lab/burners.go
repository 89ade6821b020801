package lab

import (
	"context"
	"fmt"
	"os/exec"
	"sync"
)

// Burners are CPU burners the lab runs beside a scenario, one process per
// core, each spinning without a pause: a host as busy as the one a user
// reaches for latscope on. They are processes of their own (latscope-lab
// burn), not goroutines of the lab, so that they compete with the service
// and the load alike, as other programs on the host would.
type Burners struct {
	cmds []*exec.Cmd
	wg   sync.WaitGroup
}

// StartBurners starts n burners with command (env.Command with
// "burn"); the kernel kills them if the lab dies (StartChild).
func StartBurners(ctx context.Context, n int, command func(ctx context.Context, args ...string) *exec.Cmd) (*Burners, error) {
	b := &Burners{}
	for range n {
		cmd := command(ctx, "burn")
		if err := StartChild(cmd); err != nil {
			b.Stop()
			return nil, fmt.Errorf("start CPU burner: %w", err)
		}
		b.cmds = append(b.cmds, cmd)
		b.wg.Go(func() { cmd.Wait() })
	}
	return b, nil
}

// Stop kills the burners and waits for them.
func (b *Burners) Stop() {
	for _, c := range b.cmds {
		c.Process.Kill()
	}
	b.wg.Wait()
}
